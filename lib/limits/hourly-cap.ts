import { randomInt } from 'node:crypto';
import { rateLimited } from '#lib/core/errors.ts';
import { HOUR_MS } from '#lib/core/time.ts';
import type { Db } from '#lib/db/service.ts';
import { MAX_TRIES, WRITE, forgottenAt, stateOnConditionFailure } from './limit-state.ts';

/**
 * The hard ceiling on failed password checks per account (ASVS 2.2.1), scope `account`: `recent`,
 * a number set, one member per failed or in-flight attempt of the last hour from any network. An
 * attempt that passed its network's back-off (password-backoff.ts) is admitted only if `recent`
 * holds fewer than `hourlyFailures` members younger than an hour (a sliding window: never more
 * than that many failures of one account in any 60 minutes, whatever the networks). An entry is
 * the admission time in ms times 1000 plus a random 0-999; a set holds a member once, so an entry
 * already there would not grow it and is refused (the attempt retries with another). Write:
 *   add:  ADD recent {a}   if size(recent) < hourlyFailures AND NOT contains(recent, a)
 * Entries older than an hour are deleted when the set is full (then `add` again). Failures stay in
 * `recent` for their hour; a success deletes its own entry.
 */

export interface HourlySettings {
  hourlyFailures: number;
}

/** An entry of `recent`: the admission time in ms, times 1000, plus a random 0-999 (set members differ). */
const stampAt = (t: number): number => t * 1000 + randomInt(1000);
/** The admission time (epoch ms) of an entry of `recent`. */
export const stampMs = (stamp: number): number => Math.floor(stamp / 1000);

export type HourlyPlan =
  /** Refused: the account is at its hourly cap for this long. */
  | { kind: 'limited'; waitMs: number }
  /** At the hourly cap only because of entries older than an hour: delete them, then plan again. */
  | { kind: 'prune'; stale: number[] }
  /** Below the cap: ADD recent {stamp} (condition: size(recent) < hourlyFailures, stamp not in recent). */
  | { kind: 'add' };

/** What an attempt at `now` (epoch ms) does to an account's `recent` set as stored. */
export const planHourly = (recent: number[] | undefined, now: number, s: HourlySettings): HourlyPlan => {
  const entries = recent ?? [];
  const live = entries.filter((stamp) => stampMs(stamp) > now - HOUR_MS).sort((a, b) => a - b);
  if (live.length >= s.hourlyFailures)
    return { kind: 'limited', waitMs: stampMs(live[live.length - s.hourlyFailures] as number) + HOUR_MS - now };
  if (entries.length >= s.hourlyFailures) return { kind: 'prune', stale: entries.filter((stamp) => !live.includes(stamp)) };
  return { kind: 'add' };
};

/** Runs one planned write on the account item; throws what DynamoDB threw (a failed condition included). */
const countOnAccount = async (
  db: Db,
  subject: string,
  plan: Exclude<HourlyPlan, { kind: 'limited' }>,
  stamp: number,
  now: number,
  s: HourlySettings,
) => {
  const entity = db.entities.rateLimit;
  const key = { scope: 'account' as const, subject };
  if (plan.kind === 'prune') return entity.update(key).delete({ recent: plan.stale }).go(WRITE);
  // A set holds a member once: a stamp already there (same millisecond, same random part) would
  // not grow it, so it fails the condition and the attempt retries with another.
  return entity
    .update(key)
    .add({ recent: [stamp] })
    .set({ ttl: forgottenAt(now) })
    .where(
      ({ recent }, { notExists, name, escape }) =>
        `${notExists(recent)} OR (size(${name(recent)}) < ${escape(s.hourlyFailures)} AND NOT contains(${name(recent)}, ${escape(stamp)}))`,
    )
    .go(WRITE);
};

/** Takes a place under the account's hourly cap; answers the attempt's entry in `recent`. Throws 429 or 503. */
export const passHourly = async (db: Db, subject: string, now: number, s: HourlySettings): Promise<number> => {
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
