import { randomInt } from 'node:crypto';
import { AppError, rateLimited } from '#lib/core/errors.ts';
import { log } from '#lib/core/log.ts';
import { expirySeconds } from '#lib/core/time.ts';
import type { LimitScope } from '#lib/db/entities/limits.ts';
import type { Db } from '#lib/db/service.ts';
import { isConditionFailure } from '#lib/db/transactions.ts';
import { MAX_TRIES, WRITE, stateOnConditionFailure } from './limit-state.ts';

/**
 * Token buckets kept in DynamoDB, so that every concurrent Lambda instance sees the same counts:
 * per source network for sign-in, sign-up and reset requests (source-network.ts), per user for
 * password changes (password-attempts.ts), per team, user or address for mail
 * (mail-allowances.ts); refreshes are limited per session, in the session item (lib/identity/refresh.ts,
 * with `planBucket`). `burst` tokens, one back every `refillSeconds / refill` seconds, never more
 * than `burst`. Stored as GCRA: `tat`, the time at which the bucket would be full again. With
 * T = refillSeconds * 1000 / refill (ms, rounded up) and tau = (burst - 1) * T, a request at `now`
 * is admitted when tat <= now + tau, which then becomes max(tat, now) + T. Two conditional writes
 * cover the two cases of max(), so neither needs the value read first:
 *   idle: `attribute_not_exists(tat) OR tat <= now`  ->  SET tat = now + T, epoch = (random)
 *   busy: `tat > now AND tat <= now + tau`            ->  ADD tat T  (returns the item: its epoch)
 * A failed condition returns the item as it was (ReturnValuesOnConditionCheckFailure: ALL_OLD),
 * which picks the other case or the answer 429, Retry-After = the wait until tat - tau.
 *
 * The sign-in bucket counts failures, not people: a sign-in reserves a token before anything else
 * and gives it back when the password was right (or when the account limits refused it, so no
 * password was checked). The give-back must not add to the bucket beyond its refill. An idle write
 * forgives everything before it (SET tat = now + T), reservations still out included, so a
 * give-back after one would forgive a later guess instead. Each idle write therefore draws a new
 * random `epoch`; a reservation remembers the epoch it was taken in, and its give-back is
 *   `ADD tat -T`   if epoch = (the reservation's) AND attribute_exists(tat)
 * so it only undoes its own ADD, within the run of busy writes it belongs to. What remains is the
 * clamp of max(): had the reservation never been made, a request admitted while it was out might
 * have found the bucket idle (tat <= its now) and been counted from its own time rather than
 * stacked after the reservation. The give-back then leaves that request counted from the
 * reservation's time instead: earlier by less than how long the reservation was out (one
 * sign-in's duration, well under T). So in any window the admitted guesses are at most what GCRA
 * allows in that window stretched by the longest hold: never a whole token more per window, and
 * nothing that adds up over time (test/load/limiters.test.ts checks this property).
 */

export interface BucketSettings {
  burst: number;
  refill: number;
  refillSeconds: number;
}

export type BucketPlan = { kind: 'idle' } | { kind: 'busy' } | { kind: 'limited'; waitMs: number };

/** Milliseconds per token (T) and the extra tokens a full bucket holds (tau = (burst - 1) * T). */
export const bucketTimes = (s: BucketSettings) => {
  const interval = Math.ceil((s.refillSeconds * 1000) / s.refill);
  return { interval, tolerance: (s.burst - 1) * interval };
};

/** Which write admits a request at `now`, given the stored `tat` (undefined: no item). */
export const planBucket = (tat: number | undefined, now: number, s: BucketSettings): BucketPlan => {
  const { tolerance } = bucketTimes(s);
  if (tat === undefined || tat <= now) return { kind: 'idle' };
  if (tat <= now + tolerance) return { kind: 'busy' };
  return { kind: 'limited', waitMs: tat - tolerance - now };
};

export type BucketScope = Exclude<LimitScope, 'account' | 'account-net'>;

/** A token taken from a bucket: what `giveBack` needs to return it. */
export interface BucketToken {
  readonly scope: BucketScope;
  readonly subject: string;
  /** The bucket's epoch when the token was taken (undefined: an item from before epochs). */
  readonly epoch: number | undefined;
  /** The token's size, T (ms). */
  readonly interval: number;
}

/** A random epoch for an idle write (48 bits: never the same twice in practice). */
const newEpoch = (): number => randomInt(2 ** 48 - 1);

/** Takes a token from the bucket (`scope`, `subject`). Throws 429 `rate_limited` (with Retry-After) or 503. */
export const takeToken = async (db: Db, scope: BucketScope, subject: string, now: Date, s: BucketSettings): Promise<BucketToken> => {
  const entity = db.entities.rateLimit;
  const key = { scope, subject };
  const t = now.getTime();
  const { interval, tolerance } = bucketTimes(s);
  // First guess: an idle bucket (the usual case); a wrong guess costs one failed write.
  let tat: number | undefined;
  for (let tries = 0; tries < MAX_TRIES; tries++) {
    const plan = planBucket(tat, t, s);
    if (plan.kind === 'limited') throw rateLimited(plan.waitMs);
    try {
      if (plan.kind === 'idle') {
        const epoch = newEpoch();
        await entity
          .update(key)
          .set({ tat: t + interval, epoch, ttl: expirySeconds(t + interval) })
          .where(({ tat }, { notExists, lte }) => `${notExists(tat)} OR ${lte(tat, t)}`)
          .go(WRITE);
        return { scope, subject, epoch, interval };
      }
      const { data } = await entity
        .update(key)
        .add({ tat: interval })
        // The largest tat this write can leave (an upper bound): the item must not expire before it.
        .set({ ttl: expirySeconds(t + tolerance + interval) })
        .where(({ tat }, { gt, lte }) => `${gt(tat, t)} AND ${lte(tat, t + tolerance)}`)
        .go({ response: 'all_new', params: WRITE.params });
      return { scope, subject, epoch: data.epoch, interval };
    } catch (error) {
      tat = stateOnConditionFailure(error).tat;
    }
  }
  throw rateLimited(1000);
};

/**
 * Returns a token taken by `takeToken`, unless the bucket went idle since (a new epoch: that idle
 * write already forgave it). Best effort: a token not returned only errs on the strict side.
 */
export const giveBack = async (db: Db, token: BucketToken): Promise<void> => {
  try {
    await db.entities.rateLimit
      .update({ scope: token.scope, subject: token.subject })
      .add({ tat: -token.interval })
      .where(
        ({ tat, epoch }, { exists, notExists, eq }) =>
          `${exists(tat)} AND ${token.epoch === undefined ? notExists(epoch) : eq(epoch, token.epoch)}`,
      )
      .go({ response: 'none' });
  } catch (error) {
    if (!isConditionFailure(error)) log.error('rate limiter could not give a token back', error);
  }
};

/** One bucket to take a token from, for takeTokens. */
export interface Take {
  scope: BucketScope;
  subject: string;
  settings: BucketSettings;
}

/** The Retry-After of a 429, in seconds (0 for any other error). */
const retryAfterOf = (error: unknown): number =>
  error instanceof AppError && error.code === 'rate_limited' ? Number(error.headers?.['Retry-After'] ?? 0) : 0;

/**
 * Tokens taken side by side: all of them, or none. When one refuses, the tokens the
 * others took go back and the refusal with the longest wait is thrown (the request could not pass
 * before then anyway); any other failure (503) wins over a 429.
 */
export const allOrNone = async (db: Db, groups: readonly Promise<BucketToken>[]): Promise<BucketToken[]> => {
  const taken = await Promise.allSettled(groups);
  const tokens = taken.flatMap((t) => (t.status === 'fulfilled' ? [t.value] : []));
  const refusals = taken.flatMap((t) => (t.status === 'rejected' ? [t.reason as unknown] : []));
  if (refusals.length === 0) return tokens;
  await Promise.all(tokens.map((t) => giveBack(db, t)));
  throw refusals.find((e) => retryAfterOf(e) === 0) ?? refusals.reduce((a, b) => (retryAfterOf(b) > retryAfterOf(a) ? b : a));
};

/** A token from each bucket, all or none (allOrNone). Throws 429 or 503. */
export const takeTokens = (db: Db, takes: readonly Take[], now: Date): Promise<BucketToken[]> =>
  allOrNone(
    db,
    takes.map((t) => takeToken(db, t.scope, t.subject, now, t.settings)),
  );
