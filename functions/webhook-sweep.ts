import type { Context } from 'aws-lambda';
import { log } from '#lib/core/log.ts';
import { timeBudget } from '#lib/core/time-budget.ts';
import { db } from '#lib/db/service.ts';
import { webhookQueue } from '#lib/events/webhooks/queue.ts';
import { RESERVE_MS, sweepWebhookEvents } from '#lib/events/webhooks/sweep.ts';

/**
 * The webhook sweeper: an EventBridge schedule calls it every WEBHOOK_SWEEP.everyMinutes minutes;
 * lib/events/webhooks/sweep.ts sends the audit entries whose fan-out was lost. Locally a timer calls it.
 */
export const handler = async (_event: unknown, context: Context): Promise<void> => {
  const budget = timeBudget(() => context.getRemainingTimeInMillis(), RESERVE_MS);
  const result = await sweepWebhookEvents(db(), webhookQueue, new Date(), budget.mayGoOn);
  log.info('webhook sweep', { ...result });
};
