import { createHash, randomInt } from 'node:crypto';
import { isIPv6 } from 'node:net';
import { config } from '../config.ts';
import type { LimitScope } from '../db/entities/limits.ts';
import type { Db } from '../db/service.ts';
import { isConditionFailure } from '../db/transactions.ts';
import { AppError } from '../errors.ts';
import { log } from '../log.ts';
import { HOUR_MS } from '../time.ts';

/**
 * Brute-force protection, kept in DynamoDB so that every concurrent Lambda instance sees the same
 * counts. Each state item is changed only by a conditional UpdateItem: a check and its count are
 * one atomic write, never a read followed by a separate write.
 *
 * Token buckets: per source IP (API Gateway's `sourceIp`, never a header; IPv6 by its /64) for
 * sign-in and sign-up, per user for password changes, per team for invitation mail (refreshes are
 * limited per session, in the session item: lib/refresh.ts). `burst` tokens, one back every
 * `refillSeconds / refill` seconds, never more than `burst`. Stored as GCRA: `tat`, the time at
 * which the bucket would be full again. With T = refillSeconds * 1000 / refill (ms, rounded up)
 * and tau = (burst - 1) * T, a request at `now` is admitted when tat <= now + tau, which then
 * becomes max(tat, now) + T. Two conditional writes cover the two cases of max(), so neither needs
 * the value read first:
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
 * nothing that adds up over time (test/unit/limits.test.ts checks this property).
 *
 * Password checks (sign-in, and a password change by a signed-in user) are limited by two items.
 * The account is keyed by the SHA-256 of the normalised e-mail, so unknown e-mails count exactly
 * like known ones; the network is what `clientNetwork` makes of the source IP.
 *
 *  - Per (account, network), scope `account-net`: `fails` (consecutive failures from that
 *    network), `until` (end of that network's back-off, epoch ms) and `last` (a random token of the
 *    attempt that last counted). An attempt at `now` passes unless now < until; passing adds 1 to
 *    `fails`, and the attempt that brings `fails` to n >= freeFailures sets
 *    until = now + min(backoffSeconds * 2^(n - freeFailures), backoffMaxSeconds) s. With the
 *    defaults: 5 attempts in a row, then one per 1 s, 2 s, 4 s ... up to one per 15 minutes, from
 *    that network only: a guesser backing off on one network does not hold up the owner on another.
 *    Writes (each also SET last = the attempt's token):
 *      free (n < freeFailures):  ADD fails 1              if fails < freeFailures - 1 AND until <= now
 *      back-off:                 ADD fails 1, SET until   if fails = (value read) AND until <= now
 *  - Per account, scope `account`: `recent`, a number set, one member per failed or in-flight
 *    attempt of the last hour from any network. The hard ceiling (ASVS 2.2.1): an attempt that
 *    passed its network's check is admitted only if `recent` holds fewer than `hourlyFailures`
 *    members younger than an hour (a sliding window: never more than that many failures of one
 *    account in any 60 minutes, whatever the networks). An entry is the admission time in ms times
 *    1000 plus a random 0-999; a set holds a member once, so an entry already there would not
 *    grow it and is refused (the attempt retries with another). Write:
 *      add:  ADD recent {a}   if size(recent) < hourlyFailures AND NOT contains(recent, a)
 *    Entries older than an hour are deleted when the set is full (then `add` again). When the cap
 *    refuses, the attempt takes back its own network count: ADD fails -1, SET until = 0 if last =
 *    its token (nothing counted since; otherwise the count stays, erring on the strict side).
 *
 * Each first try assumes the usual case (`free`, `add`); a failed condition returns the item as it
 * was (ALL_OLD), which picks the next write or the 429. Only the back-off write compares a value
 * read, and at most one attempt per back-off window can win it, so contention stays low. An
 * attempt is counted as a failure when it is admitted, before the password is checked, so
 * concurrent attempts cannot overtake the count; a success sets its network's fails = 0 and
 * until = 0 and deletes its own `recent` entry (failures stay in `recent` for their hour). Nothing
 * locks an account for good; a state untouched for 12 hours is forgotten (its `ttl`; for the
 * network items compared in code, while `recent` entries carry their own times: DynamoDB's TTL
 * sweep is only housekeeping).
 *
 * The accepted trade-off: the hourly cap is per account, so an attacker who spends
 * `hourlyFailures` guesses an hour, spread over enough networks (with the defaults one network
 * gets at most 17 guesses in its first hour and 4 an hour after that), also refuses the owner for
 * as long as the window stays full: until the oldest of those guesses is an hour old.
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

/** Sign-in per source network: failed (or in-flight) password checks only. */
export const SIGNIN_LIMITS: BucketSettings = { burst: config.ipBurst, refill: config.ipRefill, refillSeconds: config.ipRefillSeconds };

/** Sign-up per source network: sized for a company onboarding its staff from one office. */
export const SIGNUP_LIMITS: BucketSettings = {
  burst: config.signupBurst,
  refill: config.signupRefill,
  refillSeconds: config.signupRefillSeconds,
};

/** Password changes per user (the current password is also under the account limits). */
export const PASSWORD_CHANGE_LIMITS: BucketSettings = SIGNIN_LIMITS;

/** Refresh-token rotations per session (lib/refresh.ts); grace-window retries do not count. */
export const REFRESH_LIMITS: BucketSettings = {
  burst: config.refreshBurst,
  refill: config.refreshRefill,
  refillSeconds: config.refreshRefillSeconds,
};

export const ACCOUNT_LIMITS: AccountSettings = {
  freeFailures: config.accountFreeFailures,
  backoffSeconds: config.accountBackoffSeconds,
  backoffMaxSeconds: config.accountBackoffMaxSeconds,
  hourlyFailures: config.accountHourlyFailures,
};

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

/** The key of one account's attempts from one network (see `clientNetwork`). */
export const accountNetworkSubject = (email: string, ip: string): string => sha256(`${accountSubject(email)} ${clientNetwork(ip)}`);

export const rateLimited = (waitMs: number): AppError =>
  new AppError('rate_limited', undefined, { headers: { 'Retry-After': String(Math.max(1, Math.ceil(waitMs / 1000))) } });

const unavailable = (error: unknown): AppError => {
  log.error('rate limiter unavailable', error);
  return new AppError('unavailable', undefined, { headers: { 'Retry-After': '1' } });
};

/** A limit item's fields as stored (numbers as epoch ms, except `ttl` in seconds). */
export interface LimitState {
  tat?: number;
  epoch?: number;
  fails?: number;
  until?: number;
  recent?: number[];
  last?: number;
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
  return { tat: num(item.tat), epoch: num(item.epoch), fails: num(item.fails), until: num(item.until), recent, last: num(item.last), ttl: num(item.ttl) };
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

type BucketScope = Exclude<LimitScope, 'account' | 'account-net'>;

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

const takeToken = async (db: Db, scope: BucketScope, subject: string, now: Date, s: BucketSettings): Promise<BucketToken> => {
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
          .set({ tat: t + interval, epoch, ttl: epochSeconds(t + interval) })
          .where(({ tat }, { notExists, lte }) => `${notExists(tat)} OR ${lte(tat, t)}`)
          .go(WRITE);
        return { scope, subject, epoch, interval };
      }
      const { data } = await entity
        .update(key)
        .add({ tat: interval })
        // The largest tat this write can leave (an upper bound): the item must not expire before it.
        .set({ ttl: epochSeconds(t + tolerance + interval) })
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
      .where(({ tat, epoch }, { exists, notExists, eq }) => `${exists(tat)} AND ${token.epoch === undefined ? notExists(epoch) : eq(epoch, token.epoch)}`)
      .go({ response: 'none' });
  } catch (error) {
    if (!isConditionFailure(error)) log.error('rate limiter could not give a token back', error);
  }
};

/**
 * Reserves a token of the caller's sign-in bucket: call it first, before the account limits.
 * Give it back (`giveBack`) when the password was right, or when the account limits refused the
 * attempt (no password was checked); keep it for a wrong password or an unknown e-mail.
 * Throws 429 `rate_limited` (with Retry-After) or 503.
 */
export const limitSignIn = (db: Db, clientIp: string, now: Date, s: BucketSettings = SIGNIN_LIMITS): Promise<BucketToken> =>
  takeToken(db, 'signin-ip', ipSubject(clientIp), now, s);

/** Takes a token from the caller's sign-up bucket. Throws 429 `rate_limited` (with Retry-After) or 503. */
export const limitSignUp = async (db: Db, clientIp: string, now: Date, s: BucketSettings = SIGNUP_LIMITS): Promise<void> => {
  await takeToken(db, 'signup-ip', ipSubject(clientIp), now, s);
};

/**
 * For a password change (PUT /api/auth/user with `password`): takes a token from the user's
 * password-change bucket. Per user, not per address: everyone behind one NAT may change their
 * password, while one stolen session still cannot make the service hash without end (each change
 * costs two hashes). Call it once the request is known to change the password and its new
 * password has passed validation, before `checkPasswordAttempt` and before any hashing. Throws 429
 * `rate_limited` with `Retry-After` when the bucket is empty, 503 `unavailable` when DynamoDB
 * cannot be reached.
 */
export const limitPasswordChange = async (db: Db, userUuid: string, now: Date, s: BucketSettings = PASSWORD_CHANGE_LIMITS): Promise<void> => {
  await takeToken(db, 'password-user', userUuid, now, s);
};

// ---------------------------------------------------------------------------------------------
// Password checks: consecutive failures per (account, network) with back-off, and a sliding
// hourly cap per account

/** An entry of `recent`: the admission time in ms, times 1000, plus a random 0-999 (set members differ). */
const stampAt = (t: number): number => t * 1000 + randomInt(1000);
const stampMs = (stamp: number): number => Math.floor(stamp / 1000);

/** Seconds a network waits after its `fails`-th consecutive failure on an account (0 before the back-off starts). */
export const backoffSeconds = (fails: number, s: AccountSettings): number =>
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
export const planBackoff = (state: LimitState, now: number, s: AccountSettings): BackoffPlan => {
  if (state.ttl !== undefined && state.ttl <= Math.floor(now / 1000)) {
    const wait = backoffSeconds(1, s);
    return { kind: 'reset', until: wait > 0 ? now + wait * 1000 : 0 };
  }
  const until = state.until ?? 0;
  if (until > now) return { kind: 'limited', waitMs: until - now };
  const fails = state.fails ?? 0;
  if (fails + 1 < s.freeFailures) return { kind: 'free' };
  return { kind: 'backoff', fails, until: now + backoffSeconds(fails + 1, s) * 1000 };
};

export type HourlyPlan =
  /** Refused: the account is at its hourly cap for this long. */
  | { kind: 'limited'; waitMs: number }
  /** At the hourly cap only because of entries older than an hour: delete them, then plan again. */
  | { kind: 'prune'; stale: number[] }
  /** Below the cap: ADD recent {stamp} (condition: size(recent) < hourlyFailures, stamp not in recent). */
  | { kind: 'add' };

/** What an attempt at `now` (epoch ms) does to an account's `recent` set as stored. */
export const planHourly = (recent: number[] | undefined, now: number, s: AccountSettings): HourlyPlan => {
  const entries = recent ?? [];
  const live = entries.filter((stamp) => stampMs(stamp) > now - HOUR_MS).sort((a, b) => a - b);
  if (live.length >= s.hourlyFailures) return { kind: 'limited', waitMs: stampMs(live[live.length - s.hourlyFailures] as number) + HOUR_MS - now };
  if (entries.length >= s.hourlyFailures) return { kind: 'prune', stale: entries.filter((stamp) => !live.includes(stamp)) };
  return { kind: 'add' };
};

/** An admitted password attempt: hand it to `recordPasswordSuccess` when the password was right. */
export interface PasswordAttempt {
  /** The account's key (its `recent` set). */
  readonly subject: string;
  /** The (account, network) key (its consecutive failures). */
  readonly network: string;
  /** Its entry in the account's `recent` set. */
  readonly stamp: number;
}

const ttlAfter = (ms: number) => epochSeconds(ms + FORGET_MS);

/**
 * Runs one planned write on the (account, network) item, leaving `token` as its `last`; throws what
 * DynamoDB threw (a failed condition included).
 */
const countOnNetwork = async (db: Db, subject: string, plan: Exclude<BackoffPlan, { kind: 'limited' }>, token: number, now: number, s: AccountSettings) => {
  const entity = db.entities.rateLimit;
  const key = { scope: 'account-net' as const, subject };
  const nowSec = Math.floor(now / 1000);
  switch (plan.kind) {
    case 'reset':
      return entity
        .update(key)
        .set({ fails: 1, until: plan.until, last: token, ttl: ttlAfter(Math.max(plan.until, now)) })
        .where(({ ttl }, { lte }) => lte(ttl, nowSec))
        .go(WRITE);
    case 'free':
      return entity
        .update(key)
        .add({ fails: 1 })
        .set({ last: token, ttl: ttlAfter(now) })
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
        .set({ until: plan.until, last: token, ttl: ttlAfter(plan.until) })
        .where(
          ({ fails, until, ttl }, { notExists, eq, lte, gt }) =>
            `(${plan.fails === 0 ? `${notExists(fails)} OR ` : ''}${eq(fails, plan.fails)}) AND (${notExists(until)} OR ${lte(until, now)}) AND ` +
            `(${notExists(ttl)} OR ${gt(ttl, nowSec)})`,
        )
        .go(WRITE);
  }
};

/** Runs one planned write on the account item; throws what DynamoDB threw (a failed condition included). */
const countOnAccount = async (db: Db, subject: string, plan: Exclude<HourlyPlan, { kind: 'limited' }>, stamp: number, now: number, s: AccountSettings) => {
  const entity = db.entities.rateLimit;
  const key = { scope: 'account' as const, subject };
  if (plan.kind === 'prune') return entity.update(key).delete({ recent: plan.stale }).go(WRITE);
  // A set holds a member once: a stamp already there (same millisecond, same random part) would
  // not grow it, so it fails the condition and the attempt retries with another.
  return entity
    .update(key)
    .add({ recent: [stamp] })
    .set({ ttl: ttlAfter(now) })
    .where(
      ({ recent }, { notExists, name, escape }) =>
        `${notExists(recent)} OR (size(${name(recent)}) < ${escape(s.hourlyFailures)} AND NOT contains(${name(recent)}, ${escape(stamp)}))`,
    )
    .go(WRITE);
};

/** Passes the network's back-off check and counts the attempt there, marked `token`. Throws 429 or 503. */
const passNetwork = async (db: Db, subject: string, token: number, now: number, s: AccountSettings): Promise<void> => {
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

/** Takes a place under the account's hourly cap; answers the attempt's entry in `recent`. Throws 429 or 503. */
const passHourly = async (db: Db, subject: string, now: number, s: AccountSettings): Promise<number> => {
  let plan: HourlyPlan = { kind: 'add' };
  for (let tries = 0; tries < MAX_TRIES; tries++) {
    if (plan.kind === 'limited') throw rateLimited(plan.waitMs);
    const stamp = stampAt(now);
    try {
      await countOnAccount(db, subject, plan, stamp, now, s);
      if (plan.kind === 'add') return stamp;
      plan = { kind: 'add' };
    } catch (error) {
      plan = planHourly(stateOnConditionFailure(error).recent, now, s);
    }
  }
  throw rateLimited(1000);
};

/**
 * An attempt the hourly cap refused takes back its count on its network, if nothing has counted
 * there since (`last` is still its token). Best effort: the answer is a 429 or 503 either way, and
 * a count left behind only errs on the strict side.
 */
const takeBackNetworkCount = async (db: Db, subject: string, token: number): Promise<void> => {
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

/**
 * Admits one password check for the account of `email` from the source IP `clientIp` (sign-in,
 * or a password change by a signed-in user, which shares the sign-in counters): call it BEFORE
 * verifying the password, and do not verify when it throws. The consecutive failures and their
 * back-off count per (account, source network), so a guesser on one network does not hold up the
 * owner on another; the hourly cap counts the account's failures from every network. The attempt
 * counts as a failure from now on, so a failed check needs no further call; after a successful
 * check, call `recordPasswordSuccess(db, attempt)`. Throws 429 `rate_limited` with `Retry-After`
 * while this network is backing off on the account or the account is at its hourly cap (the same
 * answer whatever the password), 503 `unavailable` when DynamoDB cannot be reached.
 */
export const checkPasswordAttempt = async (
  db: Db,
  email: string,
  clientIp: string,
  now: Date,
  s: AccountSettings = ACCOUNT_LIMITS,
): Promise<PasswordAttempt> => {
  const subject = accountSubject(email);
  const network = accountNetworkSubject(email, clientIp);
  const token = randomInt(2 ** 48 - 1);
  await passNetwork(db, network, token, now.getTime(), s);
  try {
    return { subject, network, stamp: await passHourly(db, subject, now.getTime(), s) };
  } catch (error) {
    await takeBackNetworkCount(db, network, token);
    throw error;
  }
};

/**
 * After a successful password check admitted by `checkPasswordAttempt`: resets the consecutive
 * failures (and the back-off) of the attempt's network on the account, and takes this attempt out
 * of the account's hourly count. Two unconditional updates. Throws 503 `unavailable` when
 * DynamoDB cannot be reached.
 */
export const recordPasswordSuccess = async (db: Db, attempt: PasswordAttempt): Promise<void> => {
  const entity = db.entities.rateLimit;
  try {
    await Promise.all([
      entity
        .update({ scope: 'account-net', subject: attempt.network })
        .set({ fails: 0, until: 0, ttl: ttlAfter(stampMs(attempt.stamp)) })
        .remove(['last'])
        .go({ response: 'none' }),
      entity
        .update({ scope: 'account', subject: attempt.subject })
        .delete({ recent: [attempt.stamp] })
        .go({ response: 'none' }),
    ]);
  } catch (error) {
    throw unavailable(error);
  }
};

/** Invitation e-mails one team may cause per hour (create, re-invite and resend each send one). */
export const TEAM_MAIL_LIMITS: BucketSettings = { burst: config.teamMailsPerHour, refill: config.teamMailsPerHour, refillSeconds: 3600 };

/**
 * Takes a token from the team's invitation-mail bucket. Call it before a write that sends an
 * invitation. Throws 429 `rate_limited` (with Retry-After) or 503.
 */
export const limitTeamMail = (db: Db, teamId: number, now: Date, s: BucketSettings = TEAM_MAIL_LIMITS): Promise<BucketToken> =>
  takeToken(db, 'team-mail', String(teamId), now, s);

/** Invitation e-mails one user may cause per hour, across every team: teams are free to create. */
export const USER_INVITE_MAIL_LIMITS: BucketSettings = {
  burst: config.userInviteMailsPerHour,
  refill: config.userInviteMailsPerHour,
  refillSeconds: 3600,
};

/**
 * Takes a token from the user's invitation-mail bucket (beside the team's). A request that ends
 * without sending gives both back (`giveBack`): only mails sent count. Throws 429 or 503.
 */
export const limitUserInviteMail = (db: Db, userUuid: string, now: Date, s: BucketSettings = USER_INVITE_MAIL_LIMITS): Promise<BucketToken> =>
  takeToken(db, 'user-invite-mail', userUuid, now, s);

/** Verification and reset e-mails one address may be sent per hour. */
export const ADDRESS_MAIL_LIMITS: BucketSettings = {
  burst: config.accountMailsPerAddressHour,
  refill: config.accountMailsPerAddressHour,
  refillSeconds: 3600,
};

/**
 * Takes a token from the bucket of the address `email` (keyed like the account limits: the SHA-256
 * of the normalised address), whether or not an account has it, so that a 429 tells nothing about
 * that. Throws 429 or 503.
 */
export const limitAddressMail = (db: Db, email: string, now: Date, s: BucketSettings = ADDRESS_MAIL_LIMITS): Promise<BucketToken> =>
  takeToken(db, 'address-mail', accountSubject(email), now, s);

/**
 * Account e-mails one signed-in user may cause per hour (a confirmation link sent again, an e-mail
 * change), as many as one address may get: keyed by the user, so that strangers asking for resets
 * of the address cannot use up its owner's resends, and one account cannot mail many addresses.
 */
export const limitUserAccountMail = (db: Db, userUuid: string, now: Date, s: BucketSettings = ADDRESS_MAIL_LIMITS): Promise<BucketToken> =>
  takeToken(db, 'user-account-mail', userUuid, now, s);

/**
 * Reset requests per source network, sized like sign-up's: a request needs no account, so without
 * it one client could keep every known address's mail allowance used up. Throws 429 or 503.
 */
export const limitRecoverIp = (db: Db, clientIp: string, now: Date, s: BucketSettings = SIGNUP_LIMITS): Promise<BucketToken> =>
  takeToken(db, 'recover-ip', ipSubject(clientIp), now, s);
