import type { EntityItem } from 'electrodb';
import { config } from '#lib/core/config.ts';
import { AppError } from '#lib/core/errors.ts';
import { log } from '#lib/core/log.ts';
import { epochSeconds } from '#lib/core/time.ts';
import { type Read, readTogether } from '#lib/db/batch-read.ts';
import type { session as sessionEntity } from '#lib/db/entities/users.ts';
import { untilProcessed } from '#lib/db/pages.ts';
import type { Db } from '#lib/db/service.ts';
import { isConditionFailure } from '#lib/db/transactions.ts';
import type { Identity } from './actor.ts';
import type { PublicKey } from './keys/model.ts';
import { adoptPublishedKeys, keysInMemory, publishedKeysRead } from './keys/verification.ts';
import { claimedIdentity, verifyAccessToken } from './tokens.ts';

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

declare const live: unique symbol;

/**
 * The caller, once readAsActor (or signOutAs) found the session its token names live: the only
 * way a use case learns who is calling. Nothing outside this module makes one (without a cast).
 */
export type Actor = Readonly<Identity> & { readonly [live]: true };

declare const unread: unique symbol;

/**
 * An access token as the endpoint hands it to a use case: nothing of it is readable there. Its
 * signature is checked already when this process had the keys in memory; on a cold start it is
 * checked by readAsActor, with the keys read in the same request as the session.
 */
export interface Claims {
  readonly [unread]: true;
}

interface ClaimsState {
  token: string;
  /** As the token says; trusted only once `verified`. */
  claimed: Identity;
  verified: boolean;
}
const states = new WeakMap<Claims, ClaimsState>();
const stateOf = (claims: Claims): ClaimsState => {
  const state = states.get(claims);
  if (!state) throw new Error('claims not made by claimsOf');
  return state;
};

/**
 * The claims of an access token, for a use case to check with its first read. With the keys in
 * memory the token is verified here (401 at once, as before); without, only what needs no key is
 * (spelling, claims' types), and the signature is checked by readAsActor or verifyClaims.
 * `userId` (as claimed, not yet trusted) is for the request's log line only.
 */
export const claimsOf = async (token: string): Promise<{ claims: Claims; userId: string }> => {
  const verified = keysInMemory();
  const claimed = verified ? await verifyAccessToken(token) : claimedIdentity(token);
  const claims = Object.freeze({}) as Claims;
  states.set(claims, { token, claimed, verified });
  return { claims, userId: claimed.userUuid };
};

/** Verifies the token behind `claims` if not done yet (reading the keys if this process lacks them). Throws `unauthorized`, `unavailable`. */
export const verifyClaims = async (claims: Claims): Promise<Identity> => {
  const state = stateOf(claims);
  if (!state.verified) {
    state.claimed = await verifyAccessToken(state.token);
    state.verified = true;
  }
  return state.claimed;
};

/**
 * Reads `reads` (or the reads of the user the token claims to be: their own items) and the
 * caller's session in one BatchGetItem, and lets the request go on only if
 * that session is live and the caller's own: sign-out bites on the very next request, on every
 * function instance, without a round trip of its own. On a cold start the published signing keys
 * ride in the same request, and the token's signature is checked with them before anything read
 * is looked at. Throws `unauthorized` (`unavailable` if the keys cannot be read).
 */
export const readAsActor = async <const T extends readonly Read[]>(
  db: Db,
  claims: Claims,
  readsOf: T | ((userUuid: string) => T),
): Promise<{ actor: Actor; session: SessionItem; items: { -readonly [I in keyof T]: EntityItem<T[I][0]> | null } }> => {
  const state = stateOf(claims);
  const { userUuid, sessionId } = state.claimed;
  const reads = typeof readsOf === 'function' ? readsOf(userUuid) : readsOf;
  const own = [db.entities.session, { userUuid, sessionId }] as const;
  const withKeys = !state.verified && !keysInMemory();
  const results = await readTogether(db, withKeys ? [...reads, own, publishedKeysRead(db)] : [...reads, own]);
  if (withKeys) adoptPublishedKeys((results.at(-1) as { keys: PublicKey[] } | null)?.keys ?? null);
  const identity = await verifyClaims(claims);
  const session = results[reads.length] as SessionItem | null;
  if (!isLive(session, Date.now())) throw new AppError('unauthorized');
  // aal2 needs both: a token signed before a step-up, or a session the removal of its last factor took back to aal1, is aal1.
  const aal = identity.aal === 'aal2' && session.aal === 'aal2' ? 'aal2' : 'aal1';
  return {
    actor: { ...identity, aal } as Actor,
    session,
    items: results.slice(0, reads.length) as { -readonly [I in keyof T]: EntityItem<T[I][0]> | null },
  };
};

/** Refuses (403 `mfa_required`) an actor whose session has not proved a second factor (docs/mfa.md). */
export const requireAal2 = (actor: Actor, message?: string): void => {
  if (actor.aal !== 'aal2') throw new AppError('mfa_required', message);
};

/**
 * For a use case whose first read is a Query of the caller's own partition (their teams): `query`
 * runs with the user id the token claims, then readAsActor with `reads(result)`. Neither result is
 * handed out before the session is found live.
 */
export const queryThenReadAsActor = async <R, const T extends readonly Read[]>(
  db: Db,
  claims: Claims,
  query: (userUuid: string) => Promise<R>,
  reads: (result: R) => T,
): Promise<{ actor: Actor; result: R; items: { -readonly [I in keyof T]: EntityItem<T[I][0]> | null } }> => {
  const result = await query(stateOf(claims).claimed.userUuid);
  return { result, ...(await readAsActor(db, claims, reads(result))) };
};

/** Whether the token claims to be of session `sessionId`: only to choose which check to run (signOutAs or readAsActor); nothing is trusted by it. */
export const namesSession = (claims: Claims, sessionId: string): boolean => stateOf(claims).claimed.sessionId === sessionId;

/**
 * Ends the caller's own session: a delete conditional on it existing and being live, which is the
 * session check (so no read of its own). The token is verified first. Throws `unauthorized`.
 */
export const signOutAs = async (db: Db, claims: Claims): Promise<Actor> => {
  const identity = await verifyClaims(claims);
  try {
    await db.entities.session
      .remove({ userUuid: identity.userUuid, sessionId: identity.sessionId })
      .where((a, op) => op.gt(a.expiresAt, epochSeconds(Date.now())))
      .go();
  } catch (error) {
    if (isConditionFailure(error)) throw new AppError('unauthorized');
    throw error;
  }
  return identity as Actor;
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
    await endSessions(
      db,
      userUuid,
      page.data.map((s) => s.sessionId).filter((id) => id !== except),
    );
    cursor = page.cursor;
  } while (cursor !== null);
};

/**
 * endSessionsOf after a change that is already committed (a factor verified or removed): a failure
 * is logged, not answered, so the answer (which may hold one-time recovery codes) is not lost. The
 * sessions then end at their next refresh's check or their expiry; the log line says which user.
 */
export const endOtherSessionsAfter = async (db: Db, userUuid: string, except: string): Promise<void> => {
  try {
    await endSessionsOf(db, userUuid, except);
  } catch (error) {
    log.error('could not end the other sessions after a second-factor change', error, { userId: userUuid });
  }
};

/**
 * A user's sessions as trimSessions needs them, read beside a sign-in's transaction (eventually
 * consistent). Bounded: a user past the cap (sessions from before it, a cap lowered) loses up to a
 * cap's worth of the oldest per sign-in, so no sign-in reads or deletes more than that.
 */
export const sessionsForCap = (db: Db, userUuid: string) =>
  db.entities.session.query
    .primary({ userUuid })
    .go({ limit: 2 * config.maxSessionsPerUser, attributes: ['sessionId', 'createdAt'] })
    .then(({ data }) => data);

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
    await endSessions(
      db,
      userUuid,
      existing.slice(0, excess).map((s) => s.sessionId),
    );
  } catch (error) {
    log.error('could not end sessions beyond the cap', error);
  }
};
