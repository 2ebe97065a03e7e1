import { Entity, type EntityConfiguration } from 'electrodb';
import { KEYS, TTL_ATTRIBUTE } from './table.ts';

/**
 * What a rate-limit item counts: a token bucket (sign-in and sign-up per address, password change
 * per user, invitation mail per team and per inviting user, webhook replays per team, account mail
 * per e-mail address and per user, reset requests per address, second-factor guesses per factor and
 * per user; per recipient address: the gap
 * between two mails of a kind, and invitations and nominations per hour and per day), one
 * account's failed password attempts of the last hour from every network (`account`),
 * or one account's consecutive failures from one source network (`account-net`).
 */
export const LIMIT_SCOPES = [
  'signin-ip',
  'signup-ip',
  'password-user',
  'team-mail',
  'webhook-replay',
  'user-invite-mail',
  'address-mail',
  'user-account-mail',
  'recover-ip',
  'recipient-gap',
  'recipient-unsolicited-hour',
  'recipient-unsolicited-day',
  'mfa-factor',
  'mfa-user',
  'account',
  'account-net',
] as const;
export type LimitScope = (typeof LIMIT_SCOPES)[number];

/**
 * One rate-limit state item per (scope, subject); the subject is the SHA-256 hex of the source
 * network, of the normalised e-mail, or of both (hex survives ElectroDB's key lowercasing), a
 * user's UUID (lowercase) or a team id. Every
 * change is one conditional UpdateItem (lib/limits/), so concurrent Lambda instances never
 * lose a count.
 * `ttl` is housekeeping only: the code treats a state past its time as empty.
 */
export const rateLimit = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'rateLimit', version: '1', service: 'roster' },
      attributes: {
        scope: { type: LIMIT_SCOPES, required: true, readOnly: true },
        subject: { type: 'string', required: true, readOnly: true },
        /** Token bucket (GCRA): the theoretical arrival time, epoch milliseconds. */
        tat: { type: 'number' },
        /**
         * Token bucket: a random number drawn by each idle write (one that forgives everything before
         * it); a token is given back only within the epoch it was taken in.
         */
        epoch: { type: 'number' },
        /** Account-net: consecutive attempts from the network not followed by a success (each counts from its admission). */
        fails: { type: 'number' },
        /** Account-net: epoch milliseconds before which no attempt from the network is admitted (the back-off). */
        until: { type: 'number' },
        /**
         * Account-net: a random token of the attempt that last counted here, so that an attempt the
         * hourly cap refused can take back its own count (only if nothing counted since).
         */
        last: { type: 'number' },
        /**
         * Account: one entry per failed or in-flight attempt of the last hour from any network, its
         * admission time in epoch ms times 1000 plus a random 0-999 (set members must differ).
         */
        recent: { type: 'set', items: 'number' },
        ttl: { type: 'number', field: TTL_ATTRIBUTE },
      },
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: ['scope', 'subject'] }, sk: { field: KEYS.sk, composite: [] } },
      },
    },
    config,
  );
