/**
 * Local mode's stand-in for the invite sweeper's EventBridge schedule: calls the same handler
 * (functions/invite-sweep.ts) every INVITE_SWEEP.everyMinutes minutes with a Lambda context of its
 * timeout. Like the deployed schedule it does not retry a failed run (the next tick goes on), and
 * a tick that finds the previous run still going is skipped.
 */
import { randomUUID } from 'node:crypto';
import { INVITE_SWEEP } from '../lib/background.ts';
import { lambdaContext } from '../lib/http/apigw.ts';
import { log } from '../lib/log.ts';

export interface InviteSweeper {
  /** Stops the timer and waits for a run under way. */
  stop: () => Promise<void>;
}

export const startInviteSweeper = (everyMs = INVITE_SWEEP.everyMinutes * 60_000): InviteSweeper => {
  let running: Promise<void> | undefined;
  const tick = () => {
    if (running) return;
    running = (async () => {
      const [{ handler }, { invocation }] = await Promise.all([import('../functions/invite-sweep.ts'), import('../lib/http/server.ts')]);
      const context = lambdaContext(`roster-${INVITE_SWEEP.name}`, INVITE_SWEEP.timeoutSeconds * 1000, randomUUID());
      await invocation.run({ functionName: INVITE_SWEEP.name }, () => handler({}, context));
    })()
      .catch((error: unknown) => log.error('invite sweep failed; the next tick goes on', error))
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(tick, everyMs);
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
};
