import { randomUUID } from 'node:crypto';
import { AppError } from '#lib/core/errors.ts';
import { log } from '#lib/core/log.ts';
import { sha256Hex } from '#lib/core/sha256.ts';
import { HOUR_MS, epochSeconds, expirySeconds } from '#lib/core/time.ts';
import type { Db } from '#lib/db/service.ts';
import { isConditionFailure } from '#lib/db/transactions.ts';

/**
 * `Idempotency-Key` on the authenticated POSTs (docs/idempotency.md): the first request with a
 * key claims it with one conditional PutItem, runs, and stores its answer on the claim; the same
 * user sending the same key with the same request within the window gets that answer again
 * without anything being done twice. The claim is the lock: two racing requests cannot both
 * win it, whatever instance they land on.
 */

/** How long an answer is kept and replayed. */
export const IDEMPOTENCY_WINDOW_MS = 24 * HOUR_MS;

/** A key as Stripe takes them: 1 to 255 printable ASCII characters (a UUID v4 is the usual choice). */
export const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,255}$/;

/** Seconds a 409 `idempotency_in_progress` asks the caller to wait: most requests take well under one. */
const IN_PROGRESS_RETRY_SECONDS = 1;

export interface KeyOwner {
  readonly userUuid: string;
  readonly key: string;
}

/** A claim this request holds: only the request holding `lock` may settle or free it. */
export interface HeldKey extends KeyOwner {
  readonly lock: string;
}

/** The first answer, as it was sent: status and JSON body. */
export interface StoredAnswer {
  readonly status: number;
  readonly body: string;
}

/** What a request with a key does: run (holding the key) or answer what the first one answered. */
export type Claim = { readonly kind: 'run'; readonly held: HeldKey } | ({ readonly kind: 'replay' } & StoredAnswer);

/** What a request is, for telling a retry from another request under the same key. */
export const fingerprintOf = (route: string, path: string, body: unknown): string => sha256Hex(JSON.stringify([route, path, body ?? null]));

const recordKey = ({ userUuid, key }: KeyOwner) => ({ userUuid, keyHash: sha256Hex(key) });

/** An attribute as ElectroDB returns it, or as the SDK's raw `{ S }` / `{ N }` (condition-failure items are not unmarshalled). */
const raw = (value: unknown): string | undefined => {
  if (typeof value === 'string' || typeof value === 'number') return String(value);
  if (value !== null && typeof value === 'object') {
    const v = value as { S?: string; N?: string };
    return v.S ?? v.N;
  }
  return undefined;
};

const oldItemOf = (error: unknown): Record<string, unknown> => {
  for (let e = error; e instanceof Error; e = e.cause) {
    const item = (e as Error & { Item?: Record<string, unknown> }).Item;
    if (e.name === 'ConditionalCheckFailedException' && item) return item;
  }
  return {};
};

/**
 * Claims `key` for this request, or answers why not: the stored answer to replay, 422
 * `idempotency_key_reused` for a different request under the key, 409 `idempotency_in_progress`
 * while the first one runs. A record past its window, or whose holder's lock ran out (`holdMs`:
 * its function timed out or died), is taken over.
 */
export const claimKey = async (db: Db, owner: KeyOwner, fingerprint: string, now: number, holdMs: number): Promise<Claim> => {
  const lock = randomUUID();
  try {
    await db.entities.idempotencyRecord
      .put({
        ...recordKey(owner),
        fingerprint,
        state: 'IN_PROGRESS',
        lock,
        lockedUntil: now + holdMs,
        ttl: expirySeconds(now + IDEMPOTENCY_WINDOW_MS),
      })
      .where(
        (r, { notExists, lte, eq }) =>
          `${notExists(r.fingerprint)} OR ${lte(r.ttl, epochSeconds(now))} OR (${eq(r.state, 'IN_PROGRESS')} AND ${lte(r.lockedUntil, now)})`,
      )
      .go({ response: 'none', params: { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } });
    return { kind: 'run', held: { ...owner, lock } };
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    const old = oldItemOf(error);
    if (raw(old.fingerprint) !== fingerprint) throw new AppError('idempotency_key_reused');
    const status = Number(raw(old.status));
    const body = raw(old.body);
    if (raw(old.state) === 'COMPLETED' && Number.isInteger(status) && body !== undefined) return { kind: 'replay', status, body };
    throw new AppError('idempotency_in_progress', undefined, { headers: { 'Retry-After': String(IN_PROGRESS_RETRY_SECONDS) } });
  }
};

/**
 * Whether an answer is the request's own result, kept for its retries: any 2xx or 4xx but 401
 * (the caller's credentials, not the request) and 429 (try later). A 5xx is not kept: the retry
 * should run again (except a request cut short by its time budget: settleUnfinished).
 */
export const keepsAnswer = (status: number): boolean => status < 500 && status !== 401 && status !== 429;

/**
 * Stores the answer on the claim this request holds, and lets the claim go. Best effort: the
 * caller already has its answer; a claim not settled stays IN_PROGRESS until its lock runs out,
 * and a retry after that runs again (logged: one of the ways a key can act twice).
 */
export const settleKey = async (db: Db, held: HeldKey, answer: StoredAnswer): Promise<void> => {
  try {
    await db.entities.idempotencyRecord
      .update(recordKey(held))
      .set({ state: 'COMPLETED', status: answer.status, body: answer.body })
      .remove(['lock', 'lockedUntil'])
      .where((r, { eq }) => eq(r.lock, held.lock))
      .go({ response: 'none' });
  } catch (error) {
    log.error('idempotency answer not stored', error);
  }
};

/**
 * For a request answered 503 because its time ran out while its use case may still write: stores
 * that 503 as the key's answer but keeps the lock, so retries get the 503 (its outcome is unknown)
 * instead of running beside it, and the run, should it ever finish (a frozen Lambda thaws at its
 * next invocation), replaces it with its own answer through settleKey. Only while nothing else
 * was stored: a run that finished first keeps its answer.
 */
export const settleUnfinished = async (db: Db, held: HeldKey, answer: StoredAnswer): Promise<void> => {
  try {
    await db.entities.idempotencyRecord
      .update(recordKey(held))
      .set({ state: 'COMPLETED', status: answer.status, body: answer.body })
      .where((r, { eq }) => `${eq(r.lock, held.lock)} AND ${eq(r.state, 'IN_PROGRESS')}`)
      .go({ response: 'none' });
  } catch (error) {
    if (!isConditionFailure(error)) log.error('idempotency answer not stored', error);
  }
};

/** Frees the claim this request holds, so that a retry runs (after a 401, 429 or 5xx). Best effort, as settleKey. */
export const releaseKey = async (db: Db, held: HeldKey): Promise<void> => {
  try {
    await db.entities.idempotencyRecord
      .delete(recordKey(held))
      .where((r, { eq }) => eq(r.lock, held.lock))
      .go({ response: 'none' });
  } catch (error) {
    log.error('idempotency key not released', error);
  }
};
