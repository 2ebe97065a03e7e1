import { randomUUIDv7 } from 'node:crypto';
import { config } from '#lib/core/config.ts';
import { log } from '#lib/core/log.ts';
import { addDays, expirySeconds, isExpired, isoMillis } from '#lib/core/time.ts';
import { readTogether } from '#lib/db/batch-read.ts';
import type { Db } from '#lib/db/service.ts';
import { entryView } from '#lib/events/audit-log.ts';
import { WEBHOOK_ATTEMPTS, WEBHOOK_RETRY_DELAYS_SECONDS } from '#lib/http/background.ts';
import { type DeliveryResult, deliver, webhookMessage } from './deliver.ts';
import type { DeliveryOrder } from './queue.ts';

/**
 * One delivery attempt of one queue message (docs/webhooks.md): what it became.
 * - `delivered`: the receiver answered 2xx.
 * - `dropped`: nothing to send any more (the endpoint was deleted, or the entry is past its
 *   retention); the message is done.
 * - `retry`: failed; the message comes back after `afterSeconds`.
 * - `exhausted`: the last attempt failed; the queue moves the message to its dead letters.
 */
export type AttemptOutcome =
  { outcome: 'delivered' } | { outcome: 'dropped'; reason: string } | { outcome: 'retry'; afterSeconds: number } | { outcome: 'exhausted' };

/** The wait after failed attempt `attempt` (1-based), or undefined after the last one. */
export const retryDelaySeconds = (attempt: number): number | undefined =>
  attempt < WEBHOOK_ATTEMPTS ? WEBHOOK_RETRY_DELAYS_SECONDS[Math.max(attempt, 1) - 1] : undefined;

/**
 * Makes attempt `attempt` (the message's receive count) of `order`: reads the endpoint, the entry
 * and the team in one BatchGetItem, POSTs the signed message (lib/events/webhooks/deliver.ts: the address
 * checked again, the connection pinned to it) and puts the attempt in the endpoint's delivery log.
 * The message names the team's slug as it is now (null once the team is deleted).
 * A log write that fails is logged, not thrown: the attempt happened, and a retry would send again.
 */
export const attemptDelivery = async (db: Db, order: DeliveryOrder, attempt: number, now: Date): Promise<AttemptOutcome> => {
  const { teamId, endpointId, entryId } = order;
  const [endpoint, entry, team] = await readTogether(db, [
    [db.entities.webhookEndpoint, { teamId, endpointId }],
    [db.entities.auditEntry, { teamId, entryId }],
    [db.entities.team, { teamId }],
  ] as const);
  if (!endpoint) return { outcome: 'dropped', reason: 'the endpoint was deleted' };
  // TTL deletes an item up to days after it expires: past its ttl, the entry is gone.
  if (!entry || isExpired(entry.ttl, now)) return { outcome: 'dropped', reason: 'the event is past its retention' };
  if (!endpoint.events.includes(entry.action)) return { outcome: 'dropped', reason: 'the endpoint does not subscribe to this event' };
  const message = webhookMessage(entryView(entry), { id: teamId, slug: team?.slug ?? null });
  const result = await deliver(endpoint, message);
  const delay = result.ok ? undefined : retryDelaySeconds(attempt);
  // The next attempt is due `delay` after this one ends, when the queue's visibility is set.
  const nextAt = delay === undefined ? undefined : new Date(Date.now() + delay * 1000);
  await record(db, order, entry.action, attempt, result, now, nextAt);
  if (result.ok) return { outcome: 'delivered' };
  return delay === undefined ? { outcome: 'exhausted' } : { outcome: 'retry', afterSeconds: delay };
};

const record = async (
  db: Db,
  order: DeliveryOrder,
  action: string,
  attempt: number,
  result: DeliveryResult,
  now: Date,
  nextAt: Date | undefined,
): Promise<void> => {
  try {
    await db.entities.webhookDelivery
      .put({
        teamId: order.teamId,
        endpointId: order.endpointId,
        deliveryId: randomUUIDv7(),
        entryId: order.entryId,
        action,
        attempt,
        replay: order.replay === true,
        succeeded: result.ok,
        ...(result.status === undefined ? {} : { responseStatus: result.status }),
        ...(result.error === undefined ? {} : { error: result.error.slice(0, 500) }),
        durationMs: result.durationMs,
        createdAt: isoMillis(now),
        ...(nextAt === undefined ? {} : { nextAttemptAt: isoMillis(nextAt) }),
        ttl: expirySeconds(addDays(now, config.webhookDeliveryLogDays)),
      })
      .go({ response: 'none' });
  } catch (error) {
    log.error('webhook delivery log not written', error, { ...order, attempt, succeeded: result.ok });
  }
};
