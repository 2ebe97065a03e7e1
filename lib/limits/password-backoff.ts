import { rateLimited } from '#lib/core/errors.ts';
import { log } from '#lib/core/log.ts';
import { sha256Hex } from '#lib/core/sha256.ts';
import { epochSeconds } from '#lib/core/time.ts';
import type { Db } from '#lib/db/service.ts';
import { isConditionFailure } from '#lib/db/transactions.ts';
import { accountSubject } from './account-key.ts';
import { type LimitState, MAX_TRIES, WRITE, forgottenAt, stateOnConditionFailure } from './limit-state.ts';
import { clientNetwork } from './source-network.ts';

/**
 * Consecutive failed password checks per (account, network), scope `account-net`, with back-off
 * (password-attempts.ts runs it before the hourly cap). The item holds `fails` (consecutive
 * failures from that network), `until` (end of that network's back-off, epoch ms) and `last` (a
 * random token of the attempt that last counted). An attempt at `now` passes unless now < until;
 * passing adds 1 to `fails`, and the attempt that brings `fails` to n >= freeFailures sets
 * until = now + min(backoffSeconds * 2^(n - freeFailures), backoffMaxSeconds) s. With the
 * defaults: 5 attempts in a row, then one per 1 s, 2 s, 4 s ... up to one per 15 minutes, from
 * that network only: a guesser backing off on one network does not hold up the owner on another.
 * Writes (each also SET last = the attempt's token):
 *   free (n < freeFailures):  ADD fails 1              if fails < freeFailures - 1 AND until <= now
 *   back-off:                 ADD fails 1, SET until   if fails = (value read) AND until <= now
 * The first try assumes `free`; a failed condition returns the item as it was, which picks the
 * next write or the 429. Only the back-off write compares a value read, and at most one attempt
 * per back-off window can win it, so contention stays low.
 */

export interface BackoffSettings {
  freeFailures: number;
  backoffSeconds: number;
  backoffMaxSeconds: number;
}

/** The key of one account's attempts from one network (see `clientNetwork`). */
export const accountNetworkSubject = (email: string, ip: string): string => sha256Hex(`${accountSubject(email)} ${clientNetwork(ip)}`);

/** Seconds a network waits after its `fails`-th consecutive failure on an account (0 before the back-off starts). */
export const backoffSeconds = (fails: number, s: BackoffSettings): number =>
  fails < s.freeFailures ? 0 : Math.min(s.backoffSeconds * 2 ** (fails - s.freeFailures), s.backoffMaxSeconds);

export type BackoffPlan =
  /** Refused: wait this long. */
  | { kind: 'limited'; waitMs: number }
  /** The state is past its `ttl`: start afresh (condition: still expired). */
  | { kind: 'reset'; until: number }
  /** Within the free failures: ADD fails 1 (condition: fails < freeFailures - 1). */
  | { kind: 'free' }
  /** The attempt that starts or continues the back-off (condition: fails = `fails`, as read). */
  | { kind: 'backoff'; fails: number; until: number };

/** What an attempt at `now` (epoch ms) does to an (account, network) state as stored. */
export const planBackoff = (state: LimitState, now: number, s: BackoffSettings): BackoffPlan => {
  if (state.ttl !== undefined && state.ttl <= epochSeconds(now)) {
    const wait = backoffSeconds(1, s);
    return { kind: 'reset', until: wait > 0 ? now + wait * 1000 : 0 };
  }
  const until = state.until ?? 0;
  if (until > now) return { kind: 'limited', waitMs: until - now };
  const fails = state.fails ?? 0;
  if (fails + 1 < s.freeFailures) return { kind: 'free' };
  return { kind: 'backoff', fails, until: now + backoffSeconds(fails + 1, s) * 1000 };
};

/**
 * Runs one planned write on the (account, network) item, leaving `token` as its `last`; throws what
 * DynamoDB threw (a failed condition included).
 */
const countOnNetwork = async (
  db: Db,
  subject: string,
  plan: Exclude<BackoffPlan, { kind: 'limited' }>,
  token: number,
  now: number,
  s: BackoffSettings,
) => {
  const entity = db.entities.rateLimit;
  const key = { scope: 'account-net' as const, subject };
  const nowSec = epochSeconds(now);
  switch (plan.kind) {
    case 'reset':
      return entity
        .update(key)
        .set({ fails: 1, until: plan.until, last: token, ttl: forgottenAt(Math.max(plan.until, now)) })
        .where(({ ttl }, { lte }) => lte(ttl, nowSec))
        .go(WRITE);
    case 'free':
      return entity
        .update(key)
        .add({ fails: 1 })
        .set({ last: token, ttl: forgottenAt(now) })
        .where(
          ({ fails, until, ttl }, { notExists, lt, lte, gt }) =>
            `(${notExists(fails)} OR ${lt(fails, s.freeFailures - 1)}) AND (${notExists(until)} OR ${lte(until, now)}) AND ` +
            `(${notExists(ttl)} OR ${gt(ttl, nowSec)})`,
        )
        .go(WRITE);
    case 'backoff':
      return entity
        .update(key)
        .add({ fails: 1 })
        .set({ until: plan.until, last: token, ttl: forgottenAt(plan.until) })
        .where(
          ({ fails, until, ttl }, { notExists, eq, lte, gt }) =>
            `(${plan.fails === 0 ? `${notExists(fails)} OR ` : ''}${eq(fails, plan.fails)}) AND (${notExists(until)} OR ${lte(until, now)}) AND ` +
            `(${notExists(ttl)} OR ${gt(ttl, nowSec)})`,
        )
        .go(WRITE);
  }
};

/** Passes the network's back-off check and counts the attempt there, marked `token`. Throws 429 or 503. */
export const passNetwork = async (db: Db, subject: string, token: number, now: number, s: BackoffSettings): Promise<void> => {
  let plan: BackoffPlan = { kind: 'free' };
  for (let tries = 0; tries < MAX_TRIES; tries++) {
    if (plan.kind === 'limited') throw rateLimited(plan.waitMs);
    try {
      await countOnNetwork(db, subject, plan, token, now, s);
      return;
    } catch (error) {
      plan = planBackoff(stateOnConditionFailure(error), now, s);
    }
  }
  throw rateLimited(1000);
};

/**
 * An attempt the hourly cap refused takes back its count on its network, if nothing has counted
 * there since (`last` is still its token). Best effort: the answer is a 429 or 503 either way, and
 * a count left behind only errs on the strict side.
 */
export const takeBackNetworkCount = async (db: Db, subject: string, token: number): Promise<void> => {
  try {
    await db.entities.rateLimit
      .update({ scope: 'account-net', subject })
      .add({ fails: -1 })
      .set({ until: 0 })
      .where(({ last }, { eq }) => eq(last, token))
      .go({ response: 'none' });
  } catch (error) {
    if (!isConditionFailure(error)) log.error('rate limiter could not take back a count', error);
  }
};
