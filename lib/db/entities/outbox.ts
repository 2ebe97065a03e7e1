import { randomInt } from 'node:crypto';
import { Entity, type EntityConfiguration } from 'electrodb';
import { INDEXES, KEYS, TTL_ATTRIBUTE } from './table.ts';

/**
 * gsi3 partitions of unfinished outbox messages. A message sent at the first try makes four index
 * writes (created; claimed, a delete and a put; finished), and a GSI partition takes about 1,000
 * writes a second: 16 take about 4,000 messages a second, far above any SES sending quota. The
 * sweeper queries all 16 each minute.
 */
export const OUTBOX_SHARDS = 16;

/** gsi3 shard `n` as stored, `00`–`15`. */
export const dueShardOf = (n: number): string => String(n).padStart(2, '0');

/** A random shard: drawn again with every new due time, so no message pins one. */
export const randomDueShard = (): string => dueShardOf(randomInt(OUTBOX_SHARDS));

/**
 * What a message is: an invitation or a decline notice (about an invite), an account e-mail
 * (docs/accounts.md): a link to confirm an address, to reset a password, to confirm a new address,
 * and the notice to the old address that a change was asked for; or the nomination of a member
 * as a team's owner (`transfer`, lib/teams/transfers.ts).
 */
export const OUTBOX_KINDS = [
  'invitation',
  'declined',
  'verification',
  'recovery',
  /** A confirmation link asked for by address, without a session (GoTrue's resend): looked up when sent, as `recovery`. */
  'confirmation',
  'email_change',
  'email_change_notice',
  'transfer',
  /**
   * With CONCEAL_ACCOUNTS: a sign-up or an e-mail change asked for an address an account holds;
   * its owner is told instead of the asker (lib/identity/conceal.ts). Looked up when sent, as `recovery`.
   */
  'address_in_use',
  /** A recovery code was used to raise a session to aal2: its owner is told (docs/mfa.md). */
  'recovery_code_used',
  /** A second factor (an authenticator app or a passkey) was added to the account: its owner is told (docs/mfa.md). */
  'factor_added',
  /** A provider identity was linked to the account or unlinked from it: its owner is told the ways in it has now (docs/sso.md). */
  'identities_changed',
  /**
   * A provider sign-in claimed the account's address while the account has not confirmed it:
   * refused, and its owner told how to link the provider themselves (docs/sso.md).
   */
  'identity_refused',
] as const;
export type OutboxKind = (typeof OUTBOX_KINDS)[number];

/**
 * A message to send, written in the same transaction as the change that calls for it (the
 * transactional outbox): an invite created or re-sent, an invite declined. The table's stream
 * hands each new one to the mailer, which reads the invite as it is then, sends, and records the
 * outcome here; `status` is what makes a record processed twice send once (docs/mail.md).
 *
 * While it is unfinished (PENDING or SENDING) it is also in gsi3, under a random `dueShard`, by
 * `dueAt`: when it was written or released (PENDING) or when its lease ends (SENDING). The outbox
 * sweeper (lib/mail/outbox-sweep.ts) reads those older than its grace period. SENT and FAILED
 * remove both attributes, and with them the entry, so the index holds only what is left to do.
 */
export const outboxMessage = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'outboxMessage', version: '1', service: 'roster' },
      attributes: {
        messageId: { type: 'string', required: true, readOnly: true },
        kind: { type: OUTBOX_KINDS, required: true, readOnly: true },
        /** The invite an `invitation` or `declined` message is about. */
        inviteUuid: { type: 'string', readOnly: true },
        /** The account a `verification`, `email_change` or `email_change_notice` message is about. */
        userUuid: { type: 'string', readOnly: true },
        /**
         * The recipient of an account message: the address to confirm (`verification`), to reset
         * (`recovery`, whether or not an account has it: the mailer looks), the new address
         * (`email_change`), or the old one (`email_change_notice`).
         */
        address: { type: 'string', readOnly: true },
        /** The team and the nomination a `transfer` message is about (the team holds one open transfer). */
        teamId: { type: 'number', readOnly: true },
        transferId: { type: 'string', readOnly: true },
        status: { type: ['PENDING', 'SENDING', 'SENT', 'FAILED'] as const, required: true },
        /** Epoch milliseconds until which a mailer that claimed it may be sending it. */
        leaseUntil: { type: 'number' },
        attempts: { type: 'number' },
        /**
         * An attempt's outcome was lost (its lease ran out while SENDING): that attempt may have sent
         * it. Kept until the message ends, so that it never ends FAILED ("never sent") by mistake.
         */
        maybeSent: { type: 'boolean' },
        error: { type: 'string' },
        createdAt: { type: 'string', required: true, readOnly: true },
        sentAt: { type: 'string' },
        /** gsi3's partition while unfinished; a new message gets one by default. */
        dueShard: { type: 'string', default: randomDueShard },
        /** gsi3's sort key while unfinished (ISO 8601); a new message is due from its creation. */
        dueAt: {
          type: 'string',
          watch: ['createdAt'],
          set: (value: string | undefined, { createdAt }: { createdAt?: string }) => value ?? createdAt,
        },
        ttl: { type: 'number', field: TTL_ATTRIBUTE },
      },
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: ['messageId'] }, sk: { field: KEYS.sk, composite: [] } },
        byDue: {
          index: 'gsi3',
          // Sparse: a write that sets both composites keeps the keys only while unfinished.
          condition: (a) => a.status === 'PENDING' || a.status === 'SENDING',
          pk: { field: INDEXES.gsi3.pk, composite: ['dueShard'] },
          sk: { field: INDEXES.gsi3.sk, composite: ['dueAt'] },
        },
      },
    },
    config,
  );
