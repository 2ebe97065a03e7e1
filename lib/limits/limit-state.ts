import { type AppError, serviceUnavailable } from '#lib/core/errors.ts';
import { log } from '#lib/core/log.ts';
import { HOUR_MS, expirySeconds } from '#lib/core/time.ts';
import { isConditionFailure } from '#lib/db/transactions.ts';

/**
 * What every limiter of lib/limits/ shares: the state items as stored (scope `LimitScope`, one
 * item per subject), their conditional writes, and the answer when DynamoDB fails. Each state item
 * is changed only by a conditional UpdateItem: a check and its count are one atomic write, never a
 * read followed by a separate write. A failed condition returns the item as it was
 * (ReturnValuesOnConditionCheckFailure: ALL_OLD), which picks the next write or the 429. Any other
 * failure of a limiter's DynamoDB calls answers 503 (fail closed).
 */

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

/** The `ttl` of an account's state changed at `ms`: a state untouched for 12 hours is forgotten. */
export const forgottenAt = (ms: number): number => expirySeconds(ms + 12 * HOUR_MS);

/** Conditional writes per request before giving up on a contended item (answering 429). */
export const MAX_TRIES = 10;

/** Options of every conditional write: on failure, DynamoDB hands back the item as it was. */
export const WRITE = { response: 'none', params: { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } } as const;

/** 503 for a limiter that cannot reach DynamoDB (fail closed), logged. */
export const limiterUnavailable = (error: unknown): AppError => {
  log.error('rate limiter unavailable', error);
  return serviceUnavailable();
};

/** A number as ElectroDB returns it, or as the SDK's raw `{ N: "…" }` (condition-failure items are not unmarshalled). */
const num = (value: unknown): number | undefined => {
  if (typeof value === 'number') return value;
  if (value !== null && typeof value === 'object' && 'N' in value) return Number((value as { N: string }).N);
  return undefined;
};

const decode = (item: Record<string, unknown> | undefined): LimitState => {
  if (!item) return {};
  const set = item.recent;
  const members = Array.isArray(set)
    ? set
    : set instanceof Set
      ? [...set]
      : set !== null && typeof set === 'object' && 'NS' in set
        ? (set as { NS: unknown[] }).NS
        : [];
  const recent = members
    .map((m) => (typeof m === 'string' ? Number(m) : num(m)))
    .filter((n): n is number => n !== undefined && Number.isFinite(n));
  return {
    tat: num(item.tat),
    epoch: num(item.epoch),
    fails: num(item.fails),
    until: num(item.until),
    recent,
    last: num(item.last),
    ttl: num(item.ttl),
  };
};

/** After a failed write: the item as it was when its condition failed, or 503 for any other failure. */
export const stateOnConditionFailure = (error: unknown): LimitState => {
  if (!isConditionFailure(error)) throw limiterUnavailable(error);
  for (let e = error; e instanceof Error; e = e.cause) {
    if (e.name === 'ConditionalCheckFailedException') return decode((e as Error & { Item?: Record<string, unknown> }).Item);
  }
  return {};
};
