import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../errors.ts';
import { EVENT_METRICS } from '../metric-names.ts';
import { recordEvent } from '../metrics.ts';

/** What an ElectroDB write transaction resolves to: it does not throw when DynamoDB cancels it. */
export interface TransactionOutcome {
  canceled: boolean;
  data: ReadonlyArray<{ rejected: boolean; code: string }>;
}

/** Answer of a use case to "the condition of item i failed": an error for the caller, or try again. */
export type OnConditionFailed = (index: number) => AppError | 'retry';

const ATTEMPTS = 4;
const THROTTLED = new Set(['ThrottlingError', 'ProvisionedThroughputExceeded', 'RequestLimitExceeded']);

/**
 * Runs a transaction built by `attempt` (called again on each try, so retries can pick fresh ids).
 * The failed condition's index tells the use case which rule was broken. Conflicts with another
 * transaction are retried with jitter; throttling becomes 503; anything else is a bug (500).
 */
export const commit = async (
  attempt: () => Promise<TransactionOutcome>,
  onConditionFailed: OnConditionFailed,
): Promise<void> => {
  for (let tries = 1; tries <= ATTEMPTS; tries++) {
    const outcome = await attempt();
    if (!outcome.canceled) return;
    const codes = outcome.data.map((reason) => reason.code);
    const failed = codes.indexOf('ConditionalCheckFailed');
    if (failed >= 0) {
      const answer = onConditionFailed(failed);
      if (answer !== 'retry') throw answer;
      continue;
    }
    if (codes.some((code) => THROTTLED.has(code))) throw new AppError('unavailable', undefined, { headers: { 'Retry-After': '1' } });
    if (codes.includes('TransactionConflict')) {
      recordEvent(EVENT_METRICS.transactionConflicts);
      await sleep(10 * tries + Math.random() * 40 * tries);
      continue;
    }
    throw new Error(`transaction canceled: ${codes.join(', ')}`);
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
