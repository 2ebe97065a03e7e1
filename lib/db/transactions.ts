import { setTimeout as sleep } from 'node:timers/promises';
import { AppError, serviceUnavailable } from '#lib/core/errors.ts';
import { EVENT_METRICS } from '#lib/core/metric-names.ts';
import { recordEvent } from '#lib/core/metrics.ts';
import type { Db, Tx } from './service.ts';

/** One item of a write transaction as ElectroDB builds it (`tx.entity….commit()`). */
export type TxItem = ReturnType<Parameters<Db['transaction']['write']>[0]>[number];

/** Items of a write transaction under one name: a failed condition on any of them is reported by it. */
export interface Named<N extends string> {
  readonly name: N;
  readonly items: readonly TxItem[];
}

/**
 * Names the items that follow (none, one or several: `named('ownerCount', ...ownerCounter(…))`).
 * `otherwise` is taken by OnFailed; do not name an item so.
 */
export const named = <N extends string>(name: N, ...items: TxItem[]): Named<N> => ({ name, items });

/** A write transaction's result: per item, its name and DynamoDB's cancellation code (`None` when it was not the cause). */
export interface Outcome<N extends string> {
  readonly canceled: boolean;
  readonly reasons: ReadonlyArray<{ readonly name: N; readonly code: string }>;
}

/** A transaction that was not sent (nothing left to write): commit takes it as written. */
export const NOTHING_WRITTEN: Outcome<never> = { canceled: false, reasons: [] };

/**
 * Runs ElectroDB's write transaction over the named items and pairs each item's cancellation
 * reason with its name, so that nobody counts positions.
 */
export const write = async <N extends string>(db: Db, build: (tx: Tx) => ReadonlyArray<Named<N>>): Promise<Outcome<N>> => {
  let names: N[] = [];
  const { canceled, data } = await db.transaction
    .write((tx) => {
      const groups = build(tx);
      names = groups.flatMap((g) => g.items.map(() => g.name));
      return groups.flatMap((g) => g.items);
    })
    .go();
  // ElectroDB types `data` per item only for a literal tuple of items; here it is a list.
  const codes: ReadonlyArray<{ code: string }> = data;
  return { canceled, reasons: canceled ? codes.map((reason, n) => ({ name: names[n] as N, code: reason.code })) : [] };
};

/**
 * The use case's answer to a failed condition: an error for the caller, try again (after any
 * re-read it notes), or done (what the transaction would make true is true already: nothing to do).
 */
export type Answer = () => AppError | 'retry' | 'done';

/**
 * An answer per item name, typed against the transaction's names: either every name, or some and
 * `otherwise` for the rest. When several conditions fail at once, the first failed name in this
 * object's order answers; `otherwise` answers only when none of the listed names failed.
 */
export type OnFailed<N extends string> =
  ({ readonly [K in N]: Answer } & { readonly otherwise?: never }) | ({ readonly [K in N]?: Answer } & { readonly otherwise: Answer });

const ATTEMPTS = 4;
const THROTTLED = new Set(['ThrottlingError', 'ProvisionedThroughputExceeded', 'RequestLimitExceeded']);

/** The answer to the failed conditions among `reasons`, or undefined when no condition failed. */
const answerOf = <N extends string>(reasons: Outcome<N>['reasons'], onFailed: OnFailed<N>): Answer | undefined => {
  const failed = new Set<string>(reasons.filter((r) => r.code === 'ConditionalCheckFailed').map((r) => r.name));
  if (failed.size === 0) return undefined;
  const answers = onFailed as Partial<Record<string, Answer>>;
  const first = Object.keys(answers).find((name) => name !== 'otherwise' && failed.has(name));
  const answer = answers[first ?? 'otherwise'];
  // Unreachable through the types (every name is answered, or `otherwise` is there).
  if (!answer) throw new Error(`no answer for the failed condition of ${[...failed].join(', ')}`);
  return answer;
};

/**
 * Runs a transaction built by `attempt` (called again on each try, so retries can pick fresh ids
 * or read again), usually `() => write(db, (tx) => [named('slug', …), …])`. A failed condition is
 * answered by its item's name in `onFailed`, never by its position: adding an item cannot shift
 * which error another's failure becomes. Conflicts with another transaction are retried with
 * jitter; throttling becomes 503; anything else is a bug (500).
 */
export const commit = async <N extends string>(attempt: () => Promise<Outcome<N>>, onFailed: OnFailed<NoInfer<N>>): Promise<void> => {
  for (let tries = 1; tries <= ATTEMPTS; tries++) {
    const outcome = await attempt();
    if (!outcome.canceled) return;
    const answer = answerOf(outcome.reasons, onFailed)?.();
    if (answer instanceof AppError) throw answer;
    if (answer === 'retry') continue;
    if (answer === 'done') return;
    const codes = outcome.reasons.map((reason) => reason.code);
    if (codes.some((code) => THROTTLED.has(code))) throw serviceUnavailable();
    if (codes.includes('TransactionConflict')) {
      recordEvent(EVENT_METRICS.transactionConflicts);
      await sleep(10 * tries + Math.random() * 40 * tries);
      continue;
    }
    throw new Error(`transaction canceled: ${outcome.reasons.map((r) => `${r.name} ${r.code}`).join(', ')}`);
  }
  throw new AppError('conflict');
};

/** True when a single conditional write failed its condition (ElectroDB wraps the SDK error). */
export const isConditionFailure = (error: unknown): boolean => {
  for (let e = error; e instanceof Error; e = e.cause) {
    if (e.name === 'ConditionalCheckFailedException') return true;
  }
  return false;
};
