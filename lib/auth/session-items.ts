import type { EntityItem } from 'electrodb';
import { config } from '../config.ts';
import { type Read, readTogether } from '../db/batch-read.ts';
import type { session as sessionEntity } from '../db/entities/users.ts';
import { untilProcessed } from '../db/pages.ts';
import type { Db } from '../db/service.ts';
import { AppError } from '../errors.ts';
import { log } from '../log.ts';
import type { Actor } from './actor.ts';

/**
 * Sessions as every authenticated function sees them: checked on each request, listed, ended.
 * Making them (and signing their tokens) is sessions.ts, which only sign-up, sign-in, refresh and
 * password reset import.
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


/** Ends a user's sessions (deleting a session revokes its access and refresh tokens), 25 a request, 4 requests at a time. */
export const endSessions = (db: Db, userUuid: string, sessionIds: string[]) =>
  untilProcessed(
    sessionIds.map((sessionId) => ({ userUuid, sessionId })),
    (keys) => db.entities.session.delete(keys).go({ concurrency: 4 }),
  );

/**
 * Ends every session of a user but `except`: strongly consistent Query pages of the user's
 * partition (as large as the session cap, so usually one), each page's sessions deleted before the
 * next page is read. Every session committed before the call is found, so each stops working on
 * its next request.
 */
export const endSessionsOf = async (db: Db, userUuid: string, except?: string): Promise<void> => {
  let cursor: string | null = null;
  do {
    const page: { data: { sessionId: string }[]; cursor: string | null } = await db.entities.session.query
      .primary({ userUuid })
      .go({ consistent: true, limit: config.maxSessionsPerUser, cursor, attributes: ['sessionId'] });
    await endSessions(db, userUuid, page.data.map((s) => s.sessionId).filter((id) => id !== except));
    cursor = page.cursor;
  } while (cursor !== null);
};

/**
 * Keeps a user who just opened `opened` at `config.maxSessionsPerUser` sessions: ends the oldest
 * of `others` (the user's sessions as an eventually consistent Query read them, beside the new
 * session's transaction) beyond the cap. A soft cap: two sign-ins at once may each miss the other's
 * session, leaving the user one over until the next sign-in. Best effort: the new session is
 * already committed, so a failure here is logged and left to the next sign-in.
 */
export const trimSessions = async (db: Db, userUuid: string, others: { sessionId: string; createdAt: string }[], opened: string) => {
  const existing = others
    .filter((s) => s.sessionId !== opened)
    // Creation order; ids from before UUIDv7 (random v4) only sort right by `createdAt`.
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.sessionId.localeCompare(b.sessionId));
  const excess = existing.length + 1 - config.maxSessionsPerUser;
  if (excess <= 0) return;
  try {
    await endSessions(db, userUuid, existing.slice(0, excess).map((s) => s.sessionId));
  } catch (error) {
    log.error('could not end sessions beyond the cap', error);
  }
};
