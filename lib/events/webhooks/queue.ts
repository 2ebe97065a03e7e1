import { ChangeMessageVisibilityCommand, SQSClient, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import * as z from 'zod/mini';
import { config } from '#lib/core/config.ts';

/**
 * The webhook queue (docs/webhooks.md): one message per event (audit entry) and endpoint. Deployed,
 * an SQS queue (WEBHOOK_QUEUE_URL) whose messages the delivery function receives, with a
 * dead-letter queue after WEBHOOK_ATTEMPTS receives. Locally, the queue infra/local-queue.ts runs
 * in the server's process and registers itself here (useLocalWebhookQueue).
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

/** SQS takes at most 10 messages per SendMessageBatch. */
const SQS_BATCH = 10;

/** The deployed queue: SendMessageBatch and ChangeMessageVisibility on WEBHOOK_QUEUE_URL. */
export const sqsWebhookQueue = (queueUrl: string, client = new SQSClient({ region: config.region })): WebhookQueue => ({
  async send(orders) {
    const batches: DeliveryOrder[][] = [];
    for (let i = 0; i < orders.length; i += SQS_BATCH) batches.push(orders.slice(i, i + SQS_BATCH));
    await Promise.all(
      batches.map(async (batch) => {
        const result = await client.send(
          new SendMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: batch.map((order, i) => ({ Id: String(i), MessageBody: JSON.stringify(order) })),
          }),
        );
        const failed = result.Failed ?? [];
        if (failed.length > 0) throw new Error(`webhook queue refused ${failed.length} messages: ${failed.map((f) => f.Code).join(', ')}`);
      }),
    );
  },
  async retryAfter(receiptHandle, seconds) {
    await client.send(new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: receiptHandle, VisibilityTimeout: seconds }));
  },
});

let local: WebhookQueue | undefined;
let deployed: WebhookQueue | undefined;

/**
 * Local mode: the in-process queue (infra/local-queue.ts) takes the messages. `undefined` removes
 * `stopped`, if it is still the one in use (a queue started after it stays).
 */
export const useLocalWebhookQueue = (queue: WebhookQueue | undefined, stopped?: WebhookQueue): void => {
  if (queue === undefined && local !== stopped) return;
  local = queue;
};

/** The queue this process sends to: SQS when WEBHOOK_QUEUE_URL is set, else the local one. */
export const webhookQueue = (): WebhookQueue => {
  if (config.webhookQueueUrl) return (deployed ??= sqsWebhookQueue(config.webhookQueueUrl));
  if (!local) throw new Error('no webhook queue: WEBHOOK_QUEUE_URL is unset and no local queue runs in this process');
  return local;
};
