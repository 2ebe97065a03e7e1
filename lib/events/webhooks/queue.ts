import * as z from 'zod/mini';
import { type Queue, queueNamed } from '#lib/events/queues.ts';

/**
 * The webhook queue (docs/webhooks.md): one message per event (audit entry) and endpoint. Deployed,
 * an SQS queue (WEBHOOK_QUEUE_URL) whose messages the delivery function receives, with a
 * dead-letter queue after WEBHOOK_ATTEMPTS receives. Locally, the queue infra/local-queue.ts runs
 * in the server's process (lib/events/queues.ts).
 */

/** A message: deliver this team's audit entry to this endpoint (again, for a replay). */
export const DeliveryOrderSchema = z.strictObject({
  teamId: z.number().check(z.int(), z.positive()),
  endpointId: z.number().check(z.int(), z.positive()),
  entryId: z.string().check(z.uuid()),
  replay: z.optional(z.literal(true)),
});
export type DeliveryOrder = z.infer<typeof DeliveryOrderSchema>;

export interface WebhookQueue {
  /** Enqueues the orders; throws when any of them was not taken. */
  send(orders: readonly DeliveryOrder[]): Promise<void>;
  /** A received message that failed comes back after `seconds` (its visibility timeout). */
  retryAfter(receiptHandle: string, seconds: number): Promise<void>;
}

/** Orders on queue `queue`, one message each. */
export const ordersOn = (queue: Queue): WebhookQueue => ({
  send: (orders) => queue.send(orders.map((order) => JSON.stringify(order))),
  retryAfter: (receiptHandle, seconds) => queue.retryAfter(receiptHandle, seconds),
});

/** The queue this process sends to: SQS when WEBHOOK_QUEUE_URL is set, else the local one. */
export const webhookQueue = (): WebhookQueue => ordersOn(queueNamed('webhook'));
