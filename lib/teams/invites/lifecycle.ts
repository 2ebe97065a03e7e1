/** An invite's life as items: its TTLs, open or ended, the writes that renew or end it, its outbox mail. */
import { randomUUID } from 'node:crypto';
import { config } from '#lib/core/config.ts';
import { addDays, expirySeconds, isoMillis } from '#lib/core/time.ts';
import { statusComposites } from '#lib/db/entities/invites.ts';
import type { InviteItem } from '#lib/db/items.ts';
import type { Tx } from '#lib/db/service.ts';
import { named } from '#lib/db/transactions.ts';

/** Ended invites stay readable for a while (so a second accept gets 409, not 404), then TTL removes them. */
const endedTtl = (now: Date): number => expirySeconds(addDays(now, config.endedInviteRetentionDays));

/** Pending invites are removed by TTL a retention period after they expire. */
export const pendingTtl = (expiresAt: Date): number => expirySeconds(addDays(expiresAt, config.endedInviteRetentionDays));

export const isExpired = (i: InviteItem, now: Date): boolean => i.expiresAt <= isoMillis(now);

/** Not ended: PENDING, or EXPIRED (pending past its expiry, swept out of the lists); a re-invite or resend revives it. */
export const isOpen = (i: InviteItem): boolean => i.status === 'PENDING' || i.status === 'EXPIRED';

/**
 * The outbox message that asks for an e-mail, written in the same transaction as the change that
 * calls for it: the mailer (functions/mailer.ts) sends it, handed over by the table's stream.
 */
export const mailFor = (tx: Tx, kind: 'invitation' | 'declined', inviteUuid: string, now: Date) =>
  tx.outboxMessage
    .create({ messageId: randomUUID(), kind, inviteUuid, status: 'PENDING', createdAt: isoMillis(now), ttl: endedTtl(now) })
    .commit();

/**
 * The updates that keep a pending invite and its claim alive with new values (re-invite, resend):
 * only while the invite is still open (an EXPIRED one becomes PENDING again, back in the lists) and
 * the claim still points at it; the claim's TTL follows.
 */
export const renewPending = (
  tx: Tx,
  i: InviteItem,
  changes: { expiresAt: string; updatedAt: string; ttl: number; role?: InviteItem['role']; invitedByUuid?: string },
) => [
  tx.invite
    .patch({ inviteUuid: i.inviteUuid })
    .set({ ...changes, status: 'PENDING' })
    .composite({ teamId: i.teamId, email: i.email, inviteId: i.inviteId })
    // Parenthesised: ElectroDB ANDs this after the key and composite conditions.
    .where((a, op) => `(${op.eq(a.status, 'PENDING')} OR ${op.eq(a.status, 'EXPIRED')})`)
    .commit(),
  tx.pendingInvite
    .patch({ teamId: i.teamId, email: i.email })
    .set({ ttl: changes.ttl })
    .where((a, op) => op.eq(a.inviteUuid, i.inviteUuid))
    .commit(),
];

/** An invite as the audit log names it: its id and address. */
export const inviteTarget = (i: InviteItem) => ({ type: 'invite', id: i.inviteId, email: i.email }) as const;

/**
 * The item updates that end an invite with `status`, if it is still pending and unexpired. With
 * `asRead`, also only if nothing changed since it was read: an accept must not grant a role that
 * a re-invite changed meanwhile.
 */
export const endInvite = (tx: Tx, i: InviteItem, status: 'ACCEPTED' | 'DECLINED' | 'REVOKED', now: Date, asRead = false) => [
  named(
    'invite',
    tx.invite
      .patch({ inviteUuid: i.inviteUuid })
      .set({ status, updatedAt: isoMillis(now), ttl: endedTtl(now) })
      .composite(statusComposites(i))
      .where((a, op) => {
        const pending = `${op.eq(a.status, 'PENDING')} AND ${op.gt(a.expiresAt, isoMillis(now))}`;
        return asRead ? `${pending} AND ${op.eq(a.updatedAt, i.updatedAt)}` : pending;
      })
      .commit(),
  ),
  named(
    'pending',
    tx.pendingInvite
      .delete({ teamId: i.teamId, email: i.email })
      .where((a, op) => op.eq(a.inviteUuid, i.inviteUuid))
      .commit(),
  ),
];
