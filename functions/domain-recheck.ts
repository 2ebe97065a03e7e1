import type { Context } from 'aws-lambda';
import { log } from '#lib/core/log.ts';
import { timeBudget } from '#lib/core/time-budget.ts';
import { db } from '#lib/db/service.ts';
import { RESERVE_MS, recheckDomains } from '#lib/teams/domains/recheck.ts';

/**
 * The re-check of verified team domains: an EventBridge schedule calls it every
 * DOMAIN_RECHECK.everyMinutes minutes; lib/teams/domains/recheck.ts does the work within the
 * invocation's time. Locally a timer calls it.
 */
export const handler = async (_event: unknown, context: Context): Promise<void> => {
  const budget = timeBudget(() => context.getRemainingTimeInMillis(), RESERVE_MS);
  const result = await recheckDomains(db(), new Date(), budget.mayGoOn);
  log.info('domain re-check', { ...result });
};
