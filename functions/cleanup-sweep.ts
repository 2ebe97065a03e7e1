import type { Context } from 'aws-lambda';
import { log } from '#lib/core/log.ts';
import { timeBudget } from '#lib/core/time-budget.ts';
import { db } from '#lib/db/service.ts';
import { RESERVE_MS, sweepCleanupJobs } from '#lib/teams/cleanup-sweep.ts';

/**
 * The cleanup-job sweeper: an EventBridge schedule calls it every CLEANUP_SWEEP.everyMinutes minutes;
 * lib/teams/cleanup-sweep.ts starts again the team cleanups whose run was lost. Locally a timer calls it.
 */
export const handler = async (_event: unknown, context: Context): Promise<void> => {
  const budget = timeBudget(() => context.getRemainingTimeInMillis(), RESERVE_MS);
  const result = await sweepCleanupJobs(db(), new Date(), budget.mayGoOn);
  log.info('cleanup sweep', { ...result });
};
