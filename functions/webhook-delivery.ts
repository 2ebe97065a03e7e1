import type { SQSBatchItemFailure, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { log } from '#lib/core/log.ts';
import { db } from '#lib/db/service.ts';
import { attemptDelivery, retryDelaySeconds } from '#lib/events/webhooks/dispatch.ts';
import { type DeliveryOrder, DeliveryOrderSchema, webhookQueue } from '#lib/events/webhooks/queue.ts';

/**
 * The webhook delivery: the webhook queue calls it with up to 10 messages, delivered at once
 * (lib/events/webhooks/dispatch.ts). A failed attempt is reported failed after its visibility is set to
 * the next delay of the schedule, so the queue hands it back then; after the last attempt the
 * visibility is 0 and the queue, at its maxReceiveCount, moves it to the dead letters (an alarm).
 * A message that is not an order is logged and dropped. The attempt number is the message's receive
 * count: a receive that made no attempt (the function throttled or timed out) uses one up.
 * Locally infra/local-queue.ts calls it.
 */
const orderOf = (body: string): DeliveryOrder | undefined => {
  try {
    const parsed = DeliveryOrderSchema.safeParse(JSON.parse(body) as unknown);
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
};

const attempt = async (record: SQSRecord): Promise<SQSBatchItemFailure | undefined> => {
  const order = orderOf(record.body);
  if (!order) {
    log.error('webhook message dropped: not a delivery order', undefined, { messageId: record.messageId });
    return undefined;
  }
  const receives = Number(record.attributes.ApproximateReceiveCount) || 1;
  const failed = { itemIdentifier: record.messageId };
  try {
    const result = await attemptDelivery(db(), order, receives, new Date());
    if (result.outcome === 'delivered') return undefined;
    if (result.outcome === 'dropped') {
      log.info('webhook message dropped', { ...order, reason: result.reason });
      return undefined;
    }
    if (result.outcome === 'exhausted')
      log.error('webhook delivery failed its last attempt: to the dead letters', undefined, { ...order, attempts: receives });
    await webhookQueue().retryAfter(record.receiptHandle, result.outcome === 'retry' ? result.afterSeconds : 0);
    return failed;
  } catch (error) {
    // The database or the queue failed: the message comes back on the schedule's next delay, so a
    // long outage does not use up its attempts 180 s apart (if even that call fails, after the
    // queue's visibility timeout).
    log.error('webhook delivery attempt failed', error, { ...order, attempt: receives });
    await webhookQueue()
      .retryAfter(record.receiptHandle, retryDelaySeconds(receives) ?? 0)
      .catch((cause: unknown) => log.error('webhook message visibility not set', cause, { messageId: record.messageId }));
    return failed;
  }
};

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const results = await Promise.all(event.Records.map(attempt));
  return { batchItemFailures: results.filter((r) => r !== undefined) };
};
