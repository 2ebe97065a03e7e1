import { randomUUIDv7 } from 'node:crypto';
import type { Actor } from '#lib/auth/session-items.ts';
import { config } from '#lib/core/config.ts';
import { currentRequest } from '#lib/core/log.ts';
import { addDays, expirySeconds, isoMillis } from '#lib/core/time.ts';
import type { AUDIT_TARGETS, AuditAction } from '#lib/db/entities/audit-actions.ts';
import type { Tx } from '#lib/db/service.ts';

/**
 * The audit log (docs/audit.md): every change to a team, its members, its invites and its
 * ownership writes one entry in the same transaction as the change (`audited`), so the two commit
 * or fail together: no change without its entry, no entry without its change, and a transaction
 * retried after a conflict writes only the attempt that commits. Not derived from the table's
 * stream: the stream knows items, not who asked, from where, or in which request.
 */

/** Who made a change: the public user id and the address of the session that made it. */
export interface AuditActor {
  readonly userId: number;
  readonly email: string;
}

export const auditActor = (actor: Actor, userId: number): AuditActor => ({ userId, email: actor.email });

/** The user id of an actor without an account (the recipient of a mail, through its link): shown as null. */
export const NO_ACCOUNT = 0;

/** Roster itself, for what a schedule does (a domain whose proof lapsed): no account, a reserved address. */
export const ROSTER_ITSELF: AuditActor = { userId: NO_ACCOUNT, email: 'roster@roster.invalid' };

export interface AuditTarget {
  readonly type: (typeof AUDIT_TARGETS)[number];
  readonly id: number;
  readonly email?: string;
  readonly userId?: number;
}

/** `{ field: { before, after } }`; a field without `before` was created, one without `after` removed. */
export type Changes = Record<string, { before?: unknown; after?: unknown }>;

/** The fields of `before` and `after` whose values differ (both sides given). */
export const changed = (before: Readonly<Record<string, unknown>>, after: Readonly<Record<string, unknown>>): Changes => {
  const changes: Changes = {};
  for (const [field, value] of Object.entries(after)) if (before[field] !== value) changes[field] = { before: before[field], after: value };
  return changes;
};

export interface Audited {
  readonly teamId: number;
  readonly action: AuditAction;
  readonly actor: AuditActor;
  readonly target: AuditTarget;
  readonly changes?: Changes;
}

/**
 * The entry of one change, as an item of the change's own write transaction (a Put: its UUIDv7
 * key is new, so it needs no condition and never cancels the change). The request id and source
 * address come from the request being served.
 */
export const audited = (tx: Tx, entry: Audited, now: Date) => {
  const request = currentRequest();
  return tx.auditEntry
    .put({
      teamId: entry.teamId,
      entryId: randomUUIDv7(),
      action: entry.action,
      createdAt: isoMillis(now),
      actorUserId: entry.actor.userId,
      actorEmail: entry.actor.email,
      targetType: entry.target.type,
      targetId: entry.target.id,
      ...(entry.target.email === undefined ? {} : { targetEmail: entry.target.email }),
      ...(entry.target.userId === undefined ? {} : { targetUserId: entry.target.userId }),
      changes: JSON.stringify(entry.changes ?? {}),
      ...(request?.requestId === undefined ? {} : { requestId: request.requestId }),
      ...(request?.sourceIp === undefined ? {} : { sourceIp: request.sourceIp }),
      ttl: expirySeconds(addDays(now, config.auditRetentionDays)),
    })
    .commit();
};
