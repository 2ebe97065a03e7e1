import { Entity, type EntityConfiguration } from 'electrodb';
import { KEYS, TTL_ATTRIBUTE } from './table.ts';

/**
 * Second factors (docs/mfa.md). What a client may see of them (id, type, name, status, dates) is
 * on the user item (`factors`), which sign-in and GET /user read anyway; what proves a factor is
 * here, one item per factor under the user's partition, read only by the step-up.
 */
export const FACTOR_TYPES = ['totp', 'webauthn'] as const;
export type FactorType = (typeof FACTOR_TYPES)[number];

/** The secret half of a factor. */
export const factor = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'factor', version: '1', service: 'roster' },
      attributes: {
        userUuid: { type: 'string', required: true, readOnly: true },
        factorId: { type: 'string', required: true, readOnly: true },
        type: { type: FACTOR_TYPES, required: true, readOnly: true },
        /** The TOTP key, sealed (lib/auth/factor-seal.ts): never stored in the clear. */
        sealedSecret: { type: 'string' },
        /** The last TOTP step a code was accepted for: a code works once, and no older one after it. */
        lastStep: { type: 'number' },
        /** A passkey's credential (lib/auth/webauthn.ts), once registered: its id and COSE public key, base64url. */
        credentialId: { type: 'string' },
        publicKey: { type: 'string' },
        /** The authenticator's signature counter as last seen: an answer must carry a higher one (or both stay 0). */
        counter: { type: 'number' },
        transports: { type: 'list', items: { type: 'string' } },
        createdAt: { type: 'string', required: true, readOnly: true },
      },
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: ['userUuid'] }, sk: { field: KEYS.sk, composite: ['factorId'] } },
      },
    },
    config,
  );

/** A challenge of a factor, for one session: a verify uses it up (deletes it), within its five minutes. */
export const mfaChallenge = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'mfaChallenge', version: '1', service: 'roster' },
      attributes: {
        challengeId: { type: 'string', required: true, readOnly: true },
        userUuid: { type: 'string', required: true, readOnly: true },
        sessionId: { type: 'string', required: true, readOnly: true },
        factorId: { type: 'string', required: true, readOnly: true },
        /** A passkey's challenge (base64url) and ceremony: `create` registers it, `request` proves it. */
        webauthn: {
          type: 'map',
          properties: {
            type: { type: ['create', 'request'] as const, required: true },
            challenge: { type: 'string', required: true },
          },
        },
        createdAt: { type: 'string', required: true, readOnly: true },
        /** Epoch seconds after which it no longer works (TTL deletion comes later). */
        expiresAt: { type: 'number', required: true, readOnly: true },
        ttl: { type: 'number', field: TTL_ATTRIBUTE },
      },
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: ['challengeId'] }, sk: { field: KEYS.sk, composite: [] } },
      },
    },
    config,
  );

/** A user's recovery codes, as SHA-256 hex: using one deletes it from the set, conditional on it being there (works once). */
export const recoveryCodes = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'recoveryCodes', version: '1', service: 'roster' },
      attributes: {
        userUuid: { type: 'string', required: true, readOnly: true },
        hashes: { type: 'set', items: 'string' },
        createdAt: { type: 'string', required: true },
      },
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: ['userUuid'] }, sk: { field: KEYS.sk, composite: [] } },
      },
    },
    config,
  );

/**
 * Which account and factor a passkey belongs to, keyed by its credential id: the sign-in with a
 * passkey alone finds its account here. Created with the factor's registration (conditional: one
 * credential, one account) and deleted with the factor.
 */
export const passkeyCredential = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'passkeyCredential', version: '1', service: 'roster' },
      attributes: {
        credentialId: { type: 'string', required: true, readOnly: true },
        userUuid: { type: 'string', required: true, readOnly: true },
        factorId: { type: 'string', required: true, readOnly: true },
        createdAt: { type: 'string', required: true, readOnly: true },
      },
      indexes: {
        // A credential id is case-sensitive base64url: ElectroDB's default lowercasing of keys would
        // make two ids that differ in case one item.
        primary: { pk: { field: KEYS.pk, composite: ['credentialId'], casing: 'none' }, sk: { field: KEYS.sk, composite: [] } },
      },
    },
    config,
  );

/** A challenge for signing in with a passkey alone, before any session: a sign-in uses it up within its five minutes. */
export const passkeyChallenge = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'passkeyChallenge', version: '1', service: 'roster' },
      attributes: {
        challengeId: { type: 'string', required: true, readOnly: true },
        challenge: { type: 'string', required: true, readOnly: true },
        createdAt: { type: 'string', required: true, readOnly: true },
        expiresAt: { type: 'number', required: true, readOnly: true },
        ttl: { type: 'number', field: TTL_ATTRIBUTE },
      },
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: ['challengeId'] }, sk: { field: KEYS.sk, composite: [] } },
      },
    },
    config,
  );
