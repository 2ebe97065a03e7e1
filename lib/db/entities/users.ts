import { Entity, type EntityConfiguration } from 'electrodb';
import { FACTOR_TYPES } from './factors.ts';
import { KEYS, TTL_ATTRIBUTE } from './table.ts';

/** How a session was raised to aal2: its tokens' `amr` method (GoTrue's names where it has one). */
export const SECOND_FACTOR_METHODS = ['totp', 'recovery_code', 'mfa/webauthn'] as const;
export type SecondFactorMethod = (typeof SECOND_FACTOR_METHODS)[number];

const idPadding = { length: 16, char: '0' } as const;

/** A person who can sign in. Keyed by UUID: the access token's `sub`. */
export const user = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'user', version: '1', service: 'roster' },
      attributes: {
        userUuid: { type: 'string', required: true, readOnly: true },
        userId: { type: 'number', required: true, readOnly: true },
        email: { type: 'string', required: true },
        firstName: { type: 'string', required: true },
        lastName: { type: 'string', required: true },
        /** What the user's app keeps about them beside the names (GoTrue's user_metadata): at most 20 keys, 2 KB of JSON (lib/gotrue/). */
        metadata: { type: 'any' },
        /** The PHC string of the password's argon2id hash; '' when the account has none (made by a provider sign-in, docs/sso.md). */
        passwordHash: { type: 'string', required: true },
        /**
         * The password was last set by someone who proved the mailbox (a reset link, a sign-up from an
         * invitation): only then may a provider's verified address link to the account (docs/sso.md).
         */
        passwordFromMailbox: { type: 'boolean' },
        /** The provider whose sign-in made the account (GoTrue's `app_metadata.provider`); absent: `email`, a sign-up. */
        signUpProvider: { type: 'string', readOnly: true },
        createdAt: { type: 'string', required: true, readOnly: true },
        updatedAt: { type: 'string', required: true },
        lastSignInAt: { type: 'string' },
        /** When the address was confirmed (a mailed link, a reset, or sign-up from an invitation); absent until then. */
        emailConfirmedAt: { type: 'string' },
        /** An e-mail change waiting for its confirmation link (GoTrue's `new_email`). */
        newEmail: { type: 'string' },
        /**
         * Bumped by a password reset, a password change and an e-mail change: a mailed link records the
         * value it was issued under and works only while it is unchanged (absent counts as 0).
         */
        tokenEpoch: { type: 'number' },
        /**
         * The second factors as a client sees them (docs/mfa.md; their secrets are `factor` items),
         * at most MAX_FACTORS. Every change of the list is conditional on `factorsVersion` as read.
         */
        factors: {
          type: 'list',
          items: {
            type: 'map',
            properties: {
              id: { type: 'string', required: true },
              type: { type: FACTOR_TYPES, required: true },
              name: { type: 'string', required: true },
              status: { type: ['unverified', 'verified'] as const, required: true },
              /** A passkey's credential id (base64url), once registered: public, and what removal deletes. */
              credentialId: { type: 'string' },
              createdAt: { type: 'string', required: true },
              updatedAt: { type: 'string', required: true },
            },
          },
        },
        factorsVersion: { type: 'number' },
        /**
         * The provider identities linked to the account (docs/sso.md), at most MAX_IDENTITIES; each is
         * claimed by an `identityClaim` item. Every change of the list is conditional on `identitiesVersion` as read.
         */
        identities: {
          type: 'list',
          items: {
            type: 'map',
            properties: {
              id: { type: 'string', required: true },
              provider: { type: 'string', required: true },
              subject: { type: 'string', required: true },
              /** The verified address the provider asserted when the identity was linked. */
              email: { type: 'string', required: true },
              createdAt: { type: 'string', required: true },
              lastSignInAt: { type: 'string', required: true },
            },
          },
        },
        identitiesVersion: { type: 'number' },
      },
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: ['userUuid'] }, sk: { field: KEYS.sk, composite: [] } },
      },
    },
    config,
  );

/** One item per e-mail address: unique e-mails, and the sign-in lookup from e-mail to user. */
export const emailClaim = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'emailClaim', version: '1', service: 'roster' },
      attributes: {
        email: { type: 'string', required: true, readOnly: true },
        userUuid: { type: 'string', required: true, readOnly: true },
      },
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: ['email'] }, sk: { field: KEYS.sk, composite: [] } },
      },
    },
    config,
  );

/** Claims an integer id of one kind (user, membership, invite) whose item is keyed by something else. */
export const idClaim = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'idClaim', version: '1', service: 'roster' },
      attributes: {
        kind: { type: ['user', 'membership', 'invite'] as const, required: true, readOnly: true },
        id: { type: 'number', required: true, readOnly: true, padding: idPadding },
      },
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: ['kind', 'id'] }, sk: { field: KEYS.sk, composite: [] } },
      },
    },
    config,
  );

/** A signed-in session: what a refresh token renews and sign-out ends. */
export const session = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'session', version: '1', service: 'roster' },
      attributes: {
        sessionId: { type: 'string', required: true, readOnly: true },
        userUuid: { type: 'string', required: true, readOnly: true },
        createdAt: { type: 'string', required: true, readOnly: true },
        lastUsedAt: { type: 'string', required: true },
        /** Epoch seconds: the absolute end of the session. */
        expiresAt: { type: 'number', required: true },
        userAgent: { type: 'string' },
        ip: { type: 'string' },
        /** Refresh rotations of this session: GCRA theoretical arrival time, epoch ms (lib/identity/refresh.ts). */
        refreshTat: { type: 'number' },
        /**
         * How the session was opened, its tokens' `amr` method: a password, or a mailed link (`otp`:
         * an address confirmed, `recovery`: a reset link; lib/identity/link-sign-in.ts), or a passkey
         * alone (`passkey`, lib/identity/mfa/passkey-sign-in.ts), or a provider (`oauth`, docs/sso.md). Absent: password.
         */
        method: { type: ['password', 'otp', 'recovery', 'passkey', 'oauth'] as const },
        /** `aal2` once a second factor was proven in this session (docs/mfa.md); absent: aal1. */
        aal: { type: ['aal2'] as const },
        /** How and when (epoch s) the second factor was proven: the tokens' second `amr` entry. */
        secondMethod: { type: SECOND_FACTOR_METHODS },
        secondAt: { type: 'number' },
        /**
         * Set by a step-up (ISO 8601, as refresh tokens' `createdAt`): refresh tokens issued before it
         * are refused, so one taken from the aal1 session cannot refresh into the aal2 one.
         */
        refreshFrom: { type: 'string' },
        ttl: { type: 'number', field: TTL_ATTRIBUTE },
      },
      // Under the user's partition: "every session of this user" is a strongly consistent Query, so
      // a global sign-out or a password change misses none, however recent. Session ids are UUIDv7
      // (time-ordered), so the partition reads oldest first.
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: ['userUuid'] }, sk: { field: KEYS.sk, composite: ['sessionId'] } },
      },
    },
    config,
  );

/** A refresh token, stored only as the SHA-256 hex of its value (hex survives key lowercasing). */
export const refreshToken = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'refreshToken', version: '1', service: 'roster' },
      attributes: {
        tokenHash: { type: 'string', required: true, readOnly: true },
        sessionId: { type: 'string', required: true, readOnly: true },
        userUuid: { type: 'string', required: true, readOnly: true },
        status: { type: ['ACTIVE', 'ROTATED'] as const, required: true },
        createdAt: { type: 'string', required: true, readOnly: true },
        expiresAt: { type: 'number', required: true },
        /** Epoch milliseconds of the rotation; with `childSeal`, what a retry in the grace window needs. */
        rotatedAt: { type: 'number' },
        /** The successor token, encrypted under a key derived from this token (which is never stored). */
        childSeal: { type: 'string' },
        ttl: { type: 'number', field: TTL_ATTRIBUTE },
      },
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: ['tokenHash'] }, sk: { field: KEYS.sk, composite: [] } },
      },
    },
    config,
  );

/** What a mailed link proves and what it may do (lib/auth/account-tokens.ts). */
export const TOKEN_PURPOSES = ['verification', 'recovery', 'email_change', 'invitation', 'unsubscribe'] as const;
export type TokenPurpose = (typeof TOKEN_PURPOSES)[number];

/**
 * A link Roster mailed (confirm an address, reset a password, confirm an e-mail change, sign up
 * from an invitation, stop a team's invitations), stored only as the SHA-256 hex of its value, which only the e-mail holds.
 * Made by the mailer when it sends (lib/mail/outbox.ts), so no raw value is ever stored; used up by
 * a conditional delete in the transaction of the change it allows.
 */
export const accountToken = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'accountToken', version: '1', service: 'roster' },
      attributes: {
        tokenHash: { type: 'string', required: true, readOnly: true },
        purpose: { type: TOKEN_PURPOSES, required: true, readOnly: true },
        /** The address the link was sent to, and the only one it can confirm. */
        email: { type: 'string', required: true, readOnly: true },
        /** The account it acts on; absent for an invitation (the address may have no account yet). */
        userUuid: { type: 'string', readOnly: true },
        /** The invitation whose e-mail carried it (purpose `invitation`). */
        inviteUuid: { type: 'string', readOnly: true },
        /** The team whose invitation or nomination carried it (purpose `unsubscribe`). */
        teamId: { type: 'number', readOnly: true },
        /** The user's `tokenEpoch` when it was made. */
        epoch: { type: 'number', readOnly: true },
        createdAt: { type: 'string', required: true, readOnly: true },
        /** Epoch milliseconds after which it no longer works (TTL deletion comes later). */
        expiresAt: { type: 'number', required: true, readOnly: true },
        ttl: { type: 'number', field: TTL_ATTRIBUTE },
      },
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: ['tokenHash'] }, sk: { field: KEYS.sk, composite: [] } },
      },
    },
    config,
  );
