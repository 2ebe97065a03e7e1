/**
 * Local mode's stand-in for the webhook queue (an SQS queue deployed, infra/data-stack.ts) and for
 * the Lambda event source that feeds it to the delivery function (functions/webhook-delivery.ts).
 * No SQS runs on this machine, so the server's process holds the messages, in memory, with what
 * the delivery relies on: a message sent is received at least once, in batches of at most
 * WEBHOOK_DELIVERY.batchSize; each receive counts (`ApproximateReceiveCount`) and hides it for the
 * visibility timeout; a batch item reported failed comes back when its visibility ends, which
 * `retryAfter` (ChangeMessageVisibility) sets; one received more than maxReceiveCount times goes to
 * the dead letters, logged as an error. Not kept across restarts: a message queued when
 * `npm start` stops is lost (deployed, SQS keeps it for 4 days). `timeScale` shortens the retry
 * delays (not the visibility timeout), so tests run the 28-hour schedule in seconds.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { log } from '#lib/core/log.ts';
import { type DeliveryOrder, type WebhookQueue, useLocalWebhookQueue } from '#lib/events/webhooks/queue.ts';
import { lambdaContext } from '#lib/http/apigw.ts';
import { WEBHOOK_ATTEMPTS, WEBHOOK_DELIVERY } from '#lib/http/background.ts';

export type QueueHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

export interface LocalQueueOptions {
  /** Default: functions/webhook-delivery.ts, loaded once like a warm Lambda. */
  handler?: QueueHandler;
  /** Each retry's delay (`retryAfter`) is multiplied by this. */
  timeScale?: number;
  pollMs?: number;
  /** Batches handled at the same time (the event source's maximum concurrency, as deployed). */
  concurrency?: number;
  /** False: the queue only holds what it is sent, nothing receives it (the benchmark, which measures the senders). */
  receive?: boolean;
}

interface Held {
  id: string;
  body: string;
  sentAt: number;
  receives: number;
  visibleAt: number;
  /** The receipt handle of the latest receive: only it may change the visibility. */
  receipt?: string;
}

export interface LocalQueue extends WebhookQueue {
  /** The orders that went to the dead letters, oldest first. */
  readonly deadLetters: DeliveryOrder[];
  /** Messages not yet done (waiting or in flight). */
  size: () => number;
  stop: () => Promise<void>;
}

export const startLocalQueue = (options: LocalQueueOptions = {}): LocalQueue => {
  const { timeScale = 1, pollMs = 50, concurrency = WEBHOOK_DELIVERY.maxConcurrency, receive = true } = options;
  const waitMs = (seconds: number) => seconds * 1000 * timeScale;
  const messages = new Map<string, Held>();
  const deadLetters: DeliveryOrder[] = [];
  let handler = options.handler;
  const stopping = new AbortController();
  let stopped = false;
  const running = new Set<Promise<void>>();

  const record = (m: Held, now: number): SQSRecord => ({
    messageId: m.id,
    receiptHandle: m.receipt as string,
    body: m.body,
    attributes: {
      ApproximateReceiveCount: String(m.receives),
      SentTimestamp: String(m.sentAt),
      SenderId: 'local',
      ApproximateFirstReceiveTimestamp: String(now),
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:local:000000000000:webhooks',
    awsRegion: 'local',
  });

  const invoke = async (batch: Held[], now: number): Promise<void> => {
    const receipts = new Map(batch.map((m) => [m.id, m.receipt]));
    handler ??= (await import('#functions/webhook-delivery.ts')).handler;
    const run = handler;
    // As the local server runs a function: its requests are attributed to it (test/api/iam.test.ts).
    const { invocation } = await import('#lib/http/server.ts');
    const context = lambdaContext(WEBHOOK_DELIVERY.name, WEBHOOK_DELIVERY.timeoutSeconds * 1000, randomUUID());
    let failed: Set<string>;
    try {
      const event = { Records: batch.map((m) => record(m, now)) };
      const response = await invocation.run({ functionName: WEBHOOK_DELIVERY.name }, () => run(event, context));
      failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
    } catch (error) {
      // A crashed invocation fails its whole batch: each message comes back after its visibility.
      log.error('local webhook queue: the delivery function failed', error);
      failed = new Set(batch.map((m) => m.id));
    }
    // As SQS's DeleteMessage with this receive's handle: a message received again since (its
    // visibility ran out during a long attempt) is not deleted by the earlier receive.
    for (const m of batch) if (!failed.has(m.id) && m.receipt === receipts.get(m.id)) messages.delete(m.id);
  };

  const poll = async () => {
    while (!stopped) {
      const now = Date.now();
      if (running.size < concurrency) {
        const batch: Held[] = [];
        for (const m of messages.values()) {
          if (batch.length >= WEBHOOK_DELIVERY.batchSize) break;
          if (m.visibleAt > now) continue;
          if (m.receives >= WEBHOOK_ATTEMPTS) {
            messages.delete(m.id);
            deadLetters.push(JSON.parse(m.body) as DeliveryOrder);
            log.error('local webhook queue: a message went to the dead letters', undefined, { messageId: m.id, receives: m.receives });
            continue;
          }
          m.receives++;
          m.receipt = randomUUID();
          // Not scaled: a message must stay hidden while its attempt runs, as on SQS.
          m.visibleAt = now + WEBHOOK_DELIVERY.visibilitySeconds * 1000;
          batch.push(m);
        }
        if (batch.length > 0) {
          const run = invoke(batch, now).finally(() => running.delete(run));
          running.add(run);
          continue;
        }
      }
      await sleep(pollMs, undefined, { signal: stopping.signal }).catch(() => undefined);
    }
  };

  const queue: LocalQueue = {
    deadLetters,
    size: () => messages.size,
    async send(orders) {
      const now = Date.now();
      for (const order of orders) {
        const id = randomUUID();
        messages.set(id, { id, body: JSON.stringify(order), sentAt: now, receives: 0, visibleAt: now });
      }
    },
    async retryAfter(receiptHandle, seconds) {
      for (const m of messages.values()) {
        if (m.receipt === receiptHandle) {
          m.visibleAt = Date.now() + waitMs(seconds);
          return;
        }
      }
      throw new Error('local webhook queue: no message with that receipt handle');
    },
    async stop() {
      stopped = true;
      stopping.abort();
      await loop;
      await Promise.all(running);
      useLocalWebhookQueue(undefined, queue);
    },
  };
  useLocalWebhookQueue(queue);
  const loop = receive ? poll() : Promise.resolve();
  return queue;
};
