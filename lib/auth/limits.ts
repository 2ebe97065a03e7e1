import { createHash, randomInt } from 'node:crypto';
import { isIPv6 } from 'node:net';
import { config } from '../config.ts';
import type { LimitScope } from '../db/entities/limits.ts';
import type { Db } from '../db/service.ts';
import { isConditionFailure } from '../db/transactions.ts';
import { AppError } from '../errors.ts';
import { log } from '../log.ts';

/**
 * Brute-force protection, kept in DynamoDB so that every concurrent Lambda instance sees the same
 * counts. Each state item is changed only by a conditional UpdateItem: a check and its count are
 * one atomic write, never a read followed by a separate write.
 *
 * Per source IP (API Gateway's `sourceIp`, never a header; IPv6 by its /64), one token bucket per
 * scope (sign-in, sign-up, refresh): `burst` tokens, one back every `refillSeconds / refill`
 * seconds, never more than `burst`. Stored as GCRA: `tat`, the time at which the bucket would be
 * full again. With T = refillSeconds * 1000 / refill (ms, rounded up) and tau = (burst - 1) * T, a
 * request at `now` is admitted when tat <= now + tau, which then becomes max(tat, now) + T. Two
 * conditional writes cover the two cases of max(), so neither needs the value read first:
 *   idle: `attribute_not_exists(tat) OR tat <= now`  ->  SET tat = now + T
 *   busy: `tat > now AND tat <= now + tau`            ->  ADD tat T
 * A failed condition returns the item as it was (ReturnValuesOnConditionCheckFailure: ALL_OLD),
 * which picks the other case or the answer 429, Retry-After = the wait until tat - tau.
 *
 * Per account (keyed by the SHA-256 of the normalised e-mail, so unknown e-mails count exactly
 * like known ones), one item: `fails` (consecutive failures), `until` (end of the back-off, epoch
 * ms) and `recent` (a number set, one member per failed or in-flight attempt of the last hour).
 * An attempt is counted as a failure when it is admitted, before the password is checked, so
 * concurrent attempts cannot overtake the count; a success takes it back. An attempt at `now` is
 * admitted unless now < until, or `recent` already holds `hourlyFailures` members younger than an
 * hour (a sliding window: never more than that many failures in any 60 minutes). Admission adds 1
 * to `fails` and the attempt to `recent`, and the attempt that brings `fails` to n >= freeFailures
 * sets until = now + min(backoffSeconds * 2^(n - freeFailures), backoffMaxSeconds) s. With the
 * defaults: 5 attempts in a row, then one per 1 s, 2 s, 4 s ... up to one per 15 minutes. Writes:
 *   free (n < freeFailures):  ADD fails 1, recent {a}   if fails < freeFailures - 1 AND until <= now
 *                                                          AND size(recent) < hourlyFailures
 *   back-off:                 ADD fails 1, recent {a}, SET until   if fails = (value read) AND the same
 * The first try assumes `free`; a failed condition returns the item as it was (ALL_OLD), which picks
 * the next write or the 429. Only the back-off write compares a value read, and at most one attempt
 * per back-off window can win it, so contention stays low. Entries older than an hour are deleted
 * when the set is full. A success sets fails = 0 and until = 0 and deletes its own entry (failures
 * stay in `recent` for their hour). Nothing locks an account for good; a state untouched for 12
 * hours is forgotten (its `ttl`, compared in code: DynamoDB's TTL sweep is only housekeeping).
 *
 * Any failure of the limiter's own DynamoDB calls answers 503 (fail closed).
 */

export interface BucketSettings {
  burst: number;
  refill: number;
  refillSeconds: number;
}

export interface AccountSettings {
  freeFailures: number;
  backoffSeconds: number;
  backoffMaxSeconds: number;
  hourlyFailures: number;
}

export const IP_LIMITS: BucketSettings = { burst: config.ipBurst, refill: config.ipRefill, refillSeconds: config.ipRefillSeconds };

export const ACCOUNT_LIMITS: AccountSettings = {
  freeFailures: config.accountFreeFailures,
  backoffSeconds: config.accountBackoffSeconds,
  backoffMaxSeconds: config.accountBackoffMaxSeconds,
  hourlyFailures: config.accountHourlyFailures,
};

const HOUR_MS = 3_600_000;
/** How long an account's state is kept after its last change. */
const FORGET_MS = 12 * HOUR_MS;
/** Conditional writes per request before giving up on a contended item (answering 429). */
const MAX_TRIES = 10;

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The account key: the e-mail as sign-in normalises it (trimmed, lowercased), hashed. */
export const accountSubject = (email: string): string => sha256(email.trim().toLowerCase());

/** The network a source address stands for: an IPv4 address, or the /64 of an IPv6 one. */
export const clientNetwork = (ip: string): string => {
  const address = ip.replace(/%.*$/, '');
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1] as string;
  if (!isIPv6(address)) return address;
  const hextets = (part: string): string[] =>
    part === ''
      ? []
      : part.split(':').flatMap((group) => {
          if (!group.includes('.')) return [group];
          const [a, b, c, d] = group.split('.').map(Number) as [number, number, number, number];
          return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
        });
  const [head = '', tail] = address.split('::');
  const left = hextets(head);
  const right = tail === undefined ? [] : hextets(tail);
  const groups = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
};

export const ipSubject = (ip: string): string => sha256(clientNetwork(ip));

const rateLimited = (waitMs: number): AppError =>
  new AppError('rate_limited', undefined, { headers: { 'Retry-After': String(Math.max(1, Math.ceil(waitMs / 1000))) } });

const unavailable = (error: unknown): AppError => {
  log.error('rate limiter unavailable', error);
  return new AppError('unavailable', undefined, { headers: { 'Retry-After': '1' } });
};

/** A limit item's fields as stored (numbers as epoch ms, except `ttl` in seconds). */
export interface LimitState {
  tat?: number;
  fails?: number;
  until?: number;
  recent?: number[];
  ttl?: number;
}

/** A number as ElectroDB returns it, or as the SDK's raw `{ N: "…" }` (condition-failure items are not unmarshalled). */
const num = (value: unknown): number | undefined => {
  if (typeof value === 'number') return value;
  if (value !== null && typeof value === 'object' && 'N' in value) return Number((value as { N: string }).N);
  return undefined;
};

const decode = (item: Record<string, unknown> | undefined): LimitState => {
  if (!item) return {};
  const set = item.recent;
  const members = Array.isArray(set) ? set : set instanceof Set ? [...set] : set !== null && typeof set === 'object' && 'NS' in set ? (set as { NS: unknown[] }).NS : [];
  const recent = members.map((m) => (typeof m === 'string' ? Number(m) : num(m))).filter((n): n is number => n !== undefined && Number.isFinite(n));
  return { tat: num(item.tat), fails: num(item.fails), until: num(item.until), recent, ttl: num(item.ttl) };
};

/** After a failed write: the item as it was when its condition failed, or 503 for any other failure. */
const stateOnConditionFailure = (error: unknown): LimitState => {
  if (!isConditionFailure(error)) throw unavailable(error);
  for (let e = error; e instanceof Error; e = e.cause) {
    if (e.name === 'ConditionalCheckFailedException') return decode((e as Error & { Item?: Record<string, unknown> }).Item);
  }
  return {};
};

/** Options of every conditional write: on failure, DynamoDB hands back the item as it was. */
const WRITE = { response: 'none', params: { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } } as const;

const epochSeconds = (ms: number): number => Math.ceil(ms / 1000);

// ---------------------------------------------------------------------------------------------
// Per source IP: token buckets

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

const takeToken = async (db: Db, scope: Exclude<LimitScope, 'account'>, ip: string, now: Date, s: BucketSettings): Promise<void> => {
  const entity = db.entities.rateLimit;
  const key = { scope, subject: ipSubject(ip) };
  const t = now.getTime();
  const { interval, tolerance } = bucketTimes(s);
  // First guess: an idle bucket (the usual case); a wrong guess costs one failed write.
  let tat: number | undefined;
  for (let tries = 0; tries < MAX_TRIES; tries++) {
    const plan = planBucket(tat, t, s);
    if (plan.kind === 'limited') throw rateLimited(plan.waitMs);
    try {
      if (plan.kind === 'idle') {
        await entity
          .update(key)
          .set({ tat: t + interval, ttl: epochSeconds(t + interval) })
          .where(({ tat }, { notExists, lte }) => `${notExists(tat)} OR ${lte(tat, t)}`)
          .go(WRITE);
      } else {
        await entity
          .update(key)
          .add({ tat: interval })
          // The largest tat this write can leave (an upper bound): the item must not expire before it.
          .set({ ttl: epochSeconds(t + tolerance + interval) })
          .where(({ tat }, { gt, lte }) => `${gt(tat, t)} AND ${lte(tat, t + tolerance)}`)
          .go(WRITE);
      }
      return;
    } catch (error) {
      tat = stateOnConditionFailure(error).tat;
    }
  }
  throw rateLimited(1000);
};

/** Takes a token from the caller's sign-in bucket. Throws 429 `rate_limited` (with Retry-After) or 503. */
export const limitSignIn = (db: Db, clientIp: string, now: Date, s: BucketSettings = IP_LIMITS): Promise<void> =>
  takeToken(db, 'signin-ip', clientIp, now, s);

/** Takes a token from the caller's sign-up bucket. Throws 429 `rate_limited` (with Retry-After) or 503. */
export const limitSignUp = (db: Db, clientIp: string, now: Date, s: BucketSettings = IP_LIMITS): Promise<void> =>
  takeToken(db, 'signup-ip', clientIp, now, s);

/**
 * For POST /api/auth/refresh: takes a token from the caller's refresh bucket (its own bucket, with
 * the same settings as sign-in). Call it first, before looking the refresh token up, with
 * `call.client.ip` (API Gateway's source IP) and `call.now`. Throws 429 `rate_limited` with
 * `Retry-After` when the bucket is empty, 503 `unavailable` when DynamoDB cannot be reached.
 */
export const limitRefresh = (db: Db, clientIp: string, now: Date, s: BucketSettings = IP_LIMITS): Promise<void> =>
  takeToken(db, 'refresh-ip', clientIp, now, s);

// ---------------------------------------------------------------------------------------------
// Per account: consecutive failures with back-off, and a sliding hourly cap

/** An entry of `recent`: the admission time in ms, times 1000, plus a random 0-999 (set members differ). */
const stampAt = (t: number): number => t * 1000 + randomInt(1000);
const stampMs = (stamp: number): number => Math.floor(stamp / 1000);

/** Seconds an account waits after its `fails`-th consecutive failure (0 before the back-off starts). */
export const backoffSeconds = (fails: number, s: AccountSettings): number =>
  fails < s.freeFailures ? 0 : Math.min(s.backoffSeconds * 2 ** (fails - s.freeFailures), s.backoffMaxSeconds);

export type AttemptPlan =
  /** Refused: wait this long. */
  | { kind: 'limited'; waitMs: number }
  /** The state is past its `ttl`: start afresh (condition: still expired). */
  | { kind: 'reset'; until: number }
  /** At the hourly cap only because of entries older than an hour: delete them, then plan again. */
  | { kind: 'prune'; stale: number[] }
  /** Within the free failures: ADD fails 1 (condition: fails < freeFailures - 1). */
  | { kind: 'free' }
  /** The attempt that starts or continues the back-off (condition: fails = `fails`, as read). */
  | { kind: 'backoff'; fails: number; until: number };

/** What an attempt at `now` (epoch ms) does to an account state as stored. */
export const planAttempt = (state: LimitState, now: number, s: AccountSettings): AttemptPlan => {
  if (state.ttl !== undefined && state.ttl <= Math.floor(now / 1000)) {
    const wait = backoffSeconds(1, s);
    return { kind: 'reset', until: wait > 0 ? now + wait * 1000 : 0 };
  }
  const entries = state.recent ?? [];
  const live = entries.filter((stamp) => stampMs(stamp) > now - HOUR_MS).sort((a, b) => a - b);
  const capFreesAt = live.length >= s.hourlyFailures ? stampMs(live[live.length - s.hourlyFailures] as number) + HOUR_MS : 0;
  const blockedUntil = Math.max(state.until ?? 0, capFreesAt);
  if (blockedUntil > now) return { kind: 'limited', waitMs: blockedUntil - now };
  if (entries.length >= s.hourlyFailures) return { kind: 'prune', stale: entries.filter((stamp) => !live.includes(stamp)) };
  const fails = state.fails ?? 0;
  if (fails + 1 < s.freeFailures) return { kind: 'free' };
  return { kind: 'backoff', fails, until: now + backoffSeconds(fails + 1, s) * 1000 };
};

/** An admitted password attempt: hand it to `recordPasswordSuccess` when the password was right. */
export interface PasswordAttempt {
  readonly subject: string;
  /** Its entry in the account's `recent` set. */
  readonly stamp: number;
}

/** Runs one planned write; throws what DynamoDB threw (a failed condition included). */
const admit = async (db: Db, subject: string, plan: Exclude<AttemptPlan, { kind: 'limited' }>, stamp: number, now: number, s: AccountSettings) => {
  const entity = db.entities.rateLimit;
  const key = { scope: 'account' as const, subject };
  const nowSec = Math.floor(now / 1000);
  const ttl = (until: number) => epochSeconds(Math.max(until, now) + FORGET_MS);
  switch (plan.kind) {
    case 'prune':
      return entity.update(key).delete({ recent: plan.stale }).go(WRITE);
    case 'reset':
      return entity
        .update(key)
        .set({ fails: 1, until: plan.until, recent: [stamp], ttl: ttl(plan.until) })
        .where(({ ttl }, { lte }) => lte(ttl, nowSec))
        .go(WRITE);
    case 'free':
      return entity
        .update(key)
        .add({ fails: 1, recent: [stamp] })
        .set({ ttl: ttl(now) })
        .where(
          ({ fails, until, recent, ttl }, { notExists, lt, lte, gt, name, escape }) =>
            `(${notExists(fails)} OR ${lt(fails, s.freeFailures - 1)}) AND (${notExists(until)} OR ${lte(until, now)}) AND ` +
            `(${notExists(recent)} OR size(${name(recent)}) < ${escape(s.hourlyFailures)}) AND (${notExists(ttl)} OR ${gt(ttl, nowSec)})`,
        )
        .go(WRITE);
    case 'backoff':
      return entity
        .update(key)
        .add({ fails: 1, recent: [stamp] })
        .set({ until: plan.until, ttl: ttl(plan.until) })
        .where(
          ({ fails, until, recent, ttl }, { notExists, eq, lte, gt, name, escape }) =>
            `(${plan.fails === 0 ? `${notExists(fails)} OR ` : ''}${eq(fails, plan.fails)}) AND (${notExists(until)} OR ${lte(until, now)}) AND ` +
            `(${notExists(recent)} OR size(${name(recent)}) < ${escape(s.hourlyFailures)}) AND (${notExists(ttl)} OR ${gt(ttl, nowSec)})`,
        )
        .go(WRITE);
  }
};

/**
 * Admits one password check for the account of `email` (sign-in, or a password change by a
 * signed-in user, which shares the sign-in counter): call it BEFORE verifying the password, and
 * do not verify when it throws. The attempt counts as a failure from now on, so a failed check
 * needs no further call; after a successful check, call `recordPasswordSuccess(db, attempt)`.
 * Throws 429 `rate_limited` with `Retry-After` while the account is backing off or at its hourly
 * cap (the same answer whatever the password), 503 `unavailable` when DynamoDB cannot be reached.
 */
export const checkPasswordAttempt = async (db: Db, email: string, now: Date, s: AccountSettings = ACCOUNT_LIMITS): Promise<PasswordAttempt> => {
  const subject = accountSubject(email);
  const t = now.getTime();
  const stamp = stampAt(t);
  // First guess: within the free failures (the usual case); a wrong guess costs one failed write.
  let plan: AttemptPlan = { kind: 'free' };
  for (let tries = 0; tries < MAX_TRIES; tries++) {
    if (plan.kind === 'limited') throw rateLimited(plan.waitMs);
    try {
      await admit(db, subject, plan, stamp, t, s);
      if (plan.kind !== 'prune') return { subject, stamp };
      plan = { kind: 'free' };
    } catch (error) {
      plan = planAttempt(stateOnConditionFailure(error), t, s);
    }
  }
  throw rateLimited(1000);
};

/**
 * After a successful password check admitted by `checkPasswordAttempt`: resets the consecutive
 * failures (and the back-off) and takes this attempt out of the hourly count. One unconditional
 * update. Throws 503 `unavailable` when DynamoDB cannot be reached.
 */
export const recordPasswordSuccess = async (db: Db, attempt: PasswordAttempt): Promise<void> => {
  try {
    await db.entities.rateLimit
      .update({ scope: 'account', subject: attempt.subject })
      .set({ fails: 0, until: 0, ttl: epochSeconds(stampMs(attempt.stamp) + FORGET_MS) })
      .delete({ recent: [attempt.stamp] })
      .go({ response: 'none' });
  } catch (error) {
    throw unavailable(error);
  }
};
