import type { Context } from 'aws-lambda';
import { db } from '../lib/db/service.ts';
import { RESERVE_MS, sweepExpiredInvites } from '../lib/invite-sweep.ts';
import { log } from '../lib/log.ts';

/**
 * The invite sweeper: an EventBridge schedule calls it every INVITE_SWEEP.everyMinutes minutes;
 * lib/invite-sweep.ts does the work within the invocation's time. Locally a timer calls it.
 */
export const handler = async (_event: unknown, context: Context): Promise<void> => {
  const result = await sweepExpiredInvites(db(), new Date(), () => context.getRemainingTimeInMillis() > RESERVE_MS);
  log.info('invite sweep', { ...result });
};
