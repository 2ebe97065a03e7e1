/**
 * Local mode's stand-in for the EventBridge schedules of the background functions (lib/http/background.ts):
 * the invite sweeper (functions/invite-sweep.ts), the outbox sweeper (functions/outbox-sweep.ts) and
 * the cleanup-job sweeper (functions/cleanup-sweep.ts), the webhook sweeper (functions/webhook-sweep.ts) and
 * the domain re-check (functions/domain-recheck.ts).
 * Each timer calls the same handler every `everyMinutes` with a Lambda context of the function's
 * timeout. Like the deployed schedules it does not retry a failed run (the next tick goes on), and
 * a tick that finds the previous run still going is skipped.
 */
import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { log } from '#lib/core/log.ts';
import { lambdaContext } from '#lib/http/apigw.ts';
import { CLEANUP_SWEEP, DOMAIN_RECHECK, INVITE_SWEEP, OUTBOX_SWEEP, WEBHOOK_SWEEP } from '#lib/http/background.ts';

type ScheduledHandler = (event: unknown, context: Context) => Promise<void>;

/** Each scheduled function's descriptor and handler module, as the stack deploys them. */
const SCHEDULED = {
  [INVITE_SWEEP.name]: { fn: INVITE_SWEEP, load: () => import('#functions/invite-sweep.ts') },
  [OUTBOX_SWEEP.name]: { fn: OUTBOX_SWEEP, load: () => import('#functions/outbox-sweep.ts') },
  [CLEANUP_SWEEP.name]: { fn: CLEANUP_SWEEP, load: () => import('#functions/cleanup-sweep.ts') },
  [WEBHOOK_SWEEP.name]: { fn: WEBHOOK_SWEEP, load: () => import('#functions/webhook-sweep.ts') },
  [DOMAIN_RECHECK.name]: { fn: DOMAIN_RECHECK, load: () => import('#functions/domain-recheck.ts') },
} satisfies Record<
  string,
  { fn: { name: string; timeoutSeconds: number; everyMinutes: number }; load: () => Promise<{ handler: ScheduledHandler }> }
>;

export type ScheduledFunction = keyof typeof SCHEDULED;

export interface Schedule {
  /** Stops the timer and waits for a run under way. */
  stop: () => Promise<void>;
}

/** Calls one scheduled function every `everyMs` (default: its schedule's rate). */
export const startSchedule = (name: ScheduledFunction, everyMs = SCHEDULED[name].fn.everyMinutes * 60_000): Schedule => {
  const { fn, load } = SCHEDULED[name];
  let running: Promise<void> | undefined;
  const tick = () => {
    if (running) return;
    running = (async () => {
      const [{ handler }, { invocation }] = await Promise.all([load(), import('#lib/http/server.ts')]);
      const context = lambdaContext(`roster-${fn.name}`, fn.timeoutSeconds * 1000, randomUUID());
      await invocation.run({ functionName: fn.name }, () => handler({}, context));
    })()
      .catch((error: unknown) => log.error('scheduled run failed; the next tick goes on', error, { function: fn.name }))
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

/** Every scheduled function at its own rate, as the stack deploys them. */
export const startSchedules = (): Schedule[] => (Object.keys(SCHEDULED) as ScheduledFunction[]).map((name) => startSchedule(name));
