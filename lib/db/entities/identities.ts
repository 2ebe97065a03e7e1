import { Entity, type EntityConfiguration } from 'electrodb';
import { KEYS, TTL_ATTRIBUTE } from './table.ts';

/**
 * Which account an external identity (a provider's subject) belongs to: a provider sign-in finds
 * its account here. Created with the link (conditional: one identity, one account), deleted with
 * the unlink and the account.
 */
export const identityClaim = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'identityClaim', version: '1', service: 'roster' },
      attributes: {
        provider: { type: 'string', required: true, readOnly: true },
        subject: { type: 'string', required: true, readOnly: true },
        userUuid: { type: 'string', required: true, readOnly: true },
        identityId: { type: 'string', required: true, readOnly: true },
        createdAt: { type: 'string', required: true, readOnly: true },
      },
      indexes: {
        // A provider's subject is an opaque, case-sensitive string (OpenID Connect Core 5.7).
        primary: { pk: { field: KEYS.pk, composite: ['provider', 'subject'], casing: 'none' }, sk: { field: KEYS.sk, composite: [] } },
      },
    },
    config,
  );

/**
 * A sign-in at a provider under way: made when the browser is sent to the provider, used up (a
 * conditional delete) when the provider sends it back. Keyed by the SHA-256 of `state`, which
 * only the browser's URL carries; it holds Roster's own PKCE verifier and nonce for the provider,
 * and the app's `code_challenge` for the code Roster then gives the app.
 */
export const oauthFlow = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'oauthFlow', version: '1', service: 'roster' },
      attributes: {
        stateHash: { type: 'string', required: true, readOnly: true },
        provider: { type: 'string', required: true, readOnly: true },
        redirectTo: { type: 'string', required: true, readOnly: true },
        /** The app's S256 challenge: the code Roster answers is traded only with its verifier. */
        codeChallenge: { type: 'string', required: true, readOnly: true },
        verifier: { type: 'string', required: true, readOnly: true },
        nonce: { type: 'string', required: true, readOnly: true },
        /** Set when a signed-in user links the provider to their account (not a sign-in). */
        linkUserUuid: { type: 'string', readOnly: true },
        createdAt: { type: 'string', required: true, readOnly: true },
        /** Epoch milliseconds after which the provider's answer is refused (TTL deletion comes later). */
        expiresAt: { type: 'number', required: true, readOnly: true },
        ttl: { type: 'number', field: TTL_ATTRIBUTE },
      },
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: ['stateHash'] }, sk: { field: KEYS.sk, composite: [] } },
      },
    },
    config,
  );

/**
 * The one-time code Roster sends back to the app after a provider sign-in (GoTrue's PKCE
 * `auth_code`), keyed by its SHA-256: traded once, with the verifier of `codeChallenge`, for a session.
 */
export const oauthCode = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'oauthCode', version: '1', service: 'roster' },
      attributes: {
        codeHash: { type: 'string', required: true, readOnly: true },
        userUuid: { type: 'string', required: true, readOnly: true },
        provider: { type: 'string', required: true, readOnly: true },
        codeChallenge: { type: 'string', required: true, readOnly: true },
        /**
         * A link's code: the identity the provider vouched for, linked to `userUuid` only when the app
         * that started the link trades the code (with its verifier).
         */
        link: {
          type: 'map',
          readOnly: true,
          properties: {
            subject: { type: 'string', required: true },
            email: { type: 'string', required: true },
            firstName: { type: 'string', required: true },
            lastName: { type: 'string', required: true },
          },
        },
        createdAt: { type: 'string', required: true, readOnly: true },
        expiresAt: { type: 'number', required: true, readOnly: true },
        ttl: { type: 'number', field: TTL_ATTRIBUTE },
      },
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: ['codeHash'] }, sk: { field: KEYS.sk, composite: [] } },
      },
    },
    config,
  );
