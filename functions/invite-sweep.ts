import type { Context } from 'aws-lambda';
import { log } from '#lib/core/log.ts';
import { timeBudget } from '#lib/core/time-budget.ts';
import { db } from '#lib/db/service.ts';
import { RESERVE_MS, sweepExpiredInvites } from '#lib/teams/invites/sweep.ts';

/**
 * The invite sweeper: an EventBridge schedule calls it every INVITE_SWEEP.everyMinutes minutes;
 * lib/teams/invites/sweep.ts does the work within the invocation's time. Locally a timer calls it.
 */
export const handler = async (_event: unknown, context: Context): Promise<void> => {
  const budget = timeBudget(() => context.getRemainingTimeInMillis(), RESERVE_MS);
  const result = await sweepExpiredInvites(db(), new Date(), budget.mayGoOn);
  log.info('invite sweep', { ...result });
};
