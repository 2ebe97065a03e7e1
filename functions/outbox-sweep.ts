import type { Context } from 'aws-lambda';
import { config } from '../lib/config.ts';
import { db } from '../lib/db/service.ts';
import { log } from '../lib/log.ts';
import { RESERVE_MS, sweepOutbox } from '../lib/mail/outbox-sweep.ts';
import { createMailer } from '../lib/mail/transports.ts';

/**
 * The outbox sweeper: an EventBridge schedule calls it every OUTBOX_SWEEP.everyMinutes minutes;
 * lib/mail/outbox-sweep.ts delivers what the stream left behind within the invocation's time.
 * Locally a timer calls it (infra/schedules.ts).
 */
const mailer = createMailer();

/** Time kept back from the invocation's end: a delivery returns before Lambda would cut it off. */
const MARGIN_MS = 1000;

export const handler = async (_event: unknown, context: Context): Promise<void> => {
  const deadline = Date.now() + context.getRemainingTimeInMillis() - MARGIN_MS;
  const result = await sweepOutbox(db(), mailer, new Date(), {
    olderThanMs: config.outboxSweepGraceMs,
    mayGoOn: () => context.getRemainingTimeInMillis() > RESERVE_MS,
    deadline,
  });
  log.info('outbox sweep', { ...result });
};
