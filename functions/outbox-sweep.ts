import type { Context } from 'aws-lambda';
import { config } from '#lib/core/config.ts';
import { log } from '#lib/core/log.ts';
import { timeBudget } from '#lib/core/time-budget.ts';
import { db } from '#lib/db/service.ts';
import { RESERVE_MS, sweepOutbox } from '#lib/mail/outbox-sweep.ts';
import { createMailer } from '#lib/mail/transports.ts';

/**
 * The outbox sweeper: an EventBridge schedule calls it every OUTBOX_SWEEP.everyMinutes minutes;
 * lib/mail/outbox-sweep.ts delivers what the stream left behind within the invocation's time.
 * Locally a timer calls it (infra/schedules.ts).
 */
const mailer = createMailer();

export const handler = async (_event: unknown, context: Context): Promise<void> => {
  const { mayGoOn, deadline } = timeBudget(() => context.getRemainingTimeInMillis(), RESERVE_MS);
  const result = await sweepOutbox(db(), mailer, new Date(), { olderThanMs: config.outboxSweepGraceMs, mayGoOn, deadline });
  log.info('outbox sweep', { ...result });
};
