import type { EntityItem } from 'electrodb';
import { config } from '../config.ts';
import { type Read, readTogether } from '../db/batch-read.ts';
import type { session as sessionEntity } from '../db/entities/users.ts';
import { untilProcessed } from '../db/pages.ts';
import type { Db } from '../db/service.ts';
import { AppError } from '../errors.ts';
import type { Actor } from './actor.ts';

/**
 * Sessions as every authenticated function sees them: checked on each request, listed, ended.
 * Making them (and signing their tokens) is sessions.ts, which only sign-up, sign-in and refresh
 * import.
 */
export type SessionItem = EntityItem<ReturnType<typeof sessionEntity>>;

/** Where a sign-in came from, as API Gateway saw it (never a client-supplied header). */
export interface ClientInfo {
  ip: string;
  userAgent: string | undefined;
}

/** A session counts while it exists (sign-out deletes it) and its absolute lifetime lasts. */
export const isLive = (s: SessionItem | null, now: number): s is SessionItem => s !== null && s.expiresAt * 1000 > now;

/** Refreshable: live, and used (signed in or refreshed) within the idle timeout. */
export const isRefreshable = (s: SessionItem | null, now: number): s is SessionItem =>
  isLive(s, now) && Date.parse(s.lastUsedAt) + config.refreshIdleDays * 86_400_000 > now;

/**
 * Reads `reads` and the caller's session in one BatchGetItem, and lets the request go on only if
 * that session is live and the caller's own: sign-out bites on the very next request, on every
 * function instance, without a round trip of its own. Throws `unauthorized`.
 */
export const readAsActor = async <const T extends readonly Read[]>(
  db: Db,
  actor: Actor,
  reads: T,
): Promise<{ -readonly [I in keyof T]: EntityItem<T[I][0]> | null }> => {
  const own = [db.entities.session, { userUuid: actor.userUuid, sessionId: actor.sessionId }] as const;
  const results = await readTogether(db, [...reads, own] as const);
  if (!isLive(results[results.length - 1] as SessionItem | null, Date.now())) throw new AppError('unauthorized');
  actor.sessionChecked = true;
  return results.slice(0, -1) as { -readonly [I in keyof T]: EntityItem<T[I][0]> | null };
};


/** Ends a user's sessions (deleting a session revokes its access and refresh tokens). */
export const endSessions = (db: Db, userUuid: string, sessionIds: string[]) =>
  untilProcessed(
    sessionIds.map((sessionId) => ({ userUuid, sessionId })),
    (keys) => db.entities.session.delete(keys).go(),
  );

/** Every session of a user, oldest first: a strongly consistent Query of the user's partition. */
export const sessionsOf = async (db: Db, userUuid: string): Promise<SessionItem[]> =>
  (await db.entities.session.query.primary({ userUuid }).go({ pages: 'all', consistent: true })).data.sort((a, b) =>
    a.createdAt.localeCompare(b.createdAt),
  );
