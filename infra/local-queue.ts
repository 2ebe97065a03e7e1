/**
 * Local mode's stand-in for Roster's SQS queues (infra/data-stack.ts) and the Lambda event sources
 * that feed them to their functions: the webhook queue (functions/webhook-delivery.ts) and the work
 * queues of the mailer, the team cleanup and the webhook fan-out (lib/http/background.ts WORK_QUEUES).
 * No SQS runs on this machine, so the server's process holds the messages, in memory, with what the
 * functions rely on: a message sent is received at least once, in batches of at most the event
 * source's batch size, by at most its maximum concurrency at once; each receive counts
 * (`ApproximateReceiveCount`) and hides it for the visibility timeout; a batch item reported failed
 * comes back when its visibility ends, which `retryAfter` (ChangeMessageVisibility) sets; one
 * received maxReceives times goes to the dead letters: logged as an error, kept in `deadLetters`
 * and, with a `dataDir`, appended to DATA_DIR/dead-letters/<queue>.jsonl, which
 * `npm run replay -- --local` sends again (infra/dead-letters.ts).
 * Not kept across restarts: a message queued when `npm start` stops is lost (deployed, SQS keeps it
 * for 4 days); the sweeps find the mail and the team cleanups again, not the webhook messages.
 * `timeScale` shortens the retry delays (not the visibility timeout), so tests run the webhooks'
 * 28-hour schedule in seconds.
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { log } from '#lib/core/log.ts';
import { type Queue, type QueueName, useLocalQueue } from '#lib/events/queues.ts';
import { lambdaContext } from '#lib/http/apigw.ts';
import { WEBHOOK_ATTEMPTS, WEBHOOK_DELIVERY, WORK_QUEUES, type WorkFunction, workVisibilitySeconds } from '#lib/http/background.ts';

export type QueueHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/** What the stack deploys for a queue and its consumer: the function, its event source's settings, the queue's redrive. */
interface Consumer {
  readonly queue: QueueName;
  readonly fn: { readonly name: string; readonly timeoutSeconds: number; readonly batchSize: number; readonly maxConcurrency: number };
  readonly maxReceives: number;
  readonly visibilitySeconds: number;
  readonly load: () => Promise<{ handler: QueueHandler }>;
}

const LOADERS: Record<WorkFunction, () => Promise<{ handler: QueueHandler }>> = {
  mailer: () => import('#functions/mailer.ts'),
  'team-cleanup': () => import('#functions/team-cleanup.ts'),
  'webhook-fanout': () => import('#functions/webhook-fanout.ts'),
};

const CONSUMERS: readonly Consumer[] = [
  {
    queue: 'webhook',
    fn: WEBHOOK_DELIVERY,
    maxReceives: WEBHOOK_ATTEMPTS,
    visibilitySeconds: WEBHOOK_DELIVERY.visibilitySeconds,
    load: () => import('#functions/webhook-delivery.ts'),
  },
  ...(Object.keys(WORK_QUEUES) as WorkFunction[]).map((name) => {
    const { fn, queue, maxReceives } = WORK_QUEUES[name];
    return { queue, fn, maxReceives, visibilitySeconds: workVisibilitySeconds(fn), load: LOADERS[name] };
  }),
];

export interface LocalQueueOptions {
  /** Default: the queue's function, loaded once like a warm Lambda. */
  handler?: QueueHandler;
  /** Each retry's delay (`retryAfter`) is multiplied by this. */
  timeScale?: number;
  pollMs?: number;
  /** Batches handled at the same time; default the event source's maximum concurrency, as deployed. */
  concurrency?: number;
  /** False: the queue only holds what it is sent, nothing receives it (the benchmark, which measures the senders). */
  receive?: boolean;
  /** Where the dead letters are kept (localDeadLetterFile); default only in memory. */
  dataDir?: string;
}

/** The file of queue (or, for the stream's reader, function) `name`'s dead letters under DATA_DIR: one message body a line. */
export const localDeadLetterFile = (dataDir: string, name: string): string => join(dataDir, 'dead-letters', `${name}.jsonl`);

/** Appends `bodies` to a dead-letter file. */
export const keepDeadLetters = (file: string, bodies: readonly string[]): void => {
  mkdirSync(dirname(file), { recursive: true });
  appendFileSync(file, bodies.map((body) => `${body}\n`).join(''));
};

interface Held {
  id: string;
  body: string;
  sentAt: number;
  receives: number;
  visibleAt: number;
  /** The receipt handle of the latest receive: only it may change the visibility. */
  receipt?: string;
}

export interface LocalQueue extends Queue {
  readonly name: QueueName;
  /** The bodies that went to the dead letters, oldest first. */
  readonly deadLetters: string[];
  /** Messages not yet done (waiting or in flight). */
  size: () => number;
  /** The bodies of the messages not yet done. */
  pending: () => string[];
  stop: () => Promise<void>;
}

/** Starts queue `name` with its consumer, and makes it the one this process sends `name`'s messages to. */
export const startLocalQueue = (name: QueueName, options: LocalQueueOptions = {}): LocalQueue => {
  const consumer = CONSUMERS.find((c) => c.queue === name);
  if (!consumer) throw new Error(`no local queue ${name}`);
  const { fn } = consumer;
  const { timeScale = 1, pollMs = 50, concurrency = fn.maxConcurrency, receive = true } = options;
  const waitMs = (seconds: number) => seconds * 1000 * timeScale;
  const messages = new Map<string, Held>();
  const deadLetters: string[] = [];
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
    eventSourceARN: `arn:aws:sqs:local:000000000000:${name}`,
    awsRegion: 'local',
  });

  const invoke = async (batch: Held[], now: number): Promise<void> => {
    const receipts = new Map(batch.map((m) => [m.id, m.receipt]));
    handler ??= (await consumer.load()).handler;
    const run = handler;
    // As the local server runs a function: its requests are attributed to it (test/api/iam.test.ts).
    const { invocation } = await import('#lib/http/server.ts');
    const context = lambdaContext(fn.name, fn.timeoutSeconds * 1000, randomUUID());
    let failed: Set<string>;
    try {
      const event = { Records: batch.map((m) => record(m, now)) };
      const response = await invocation.run({ functionName: fn.name }, () => run(event, context));
      failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
    } catch (error) {
      // A crashed invocation fails its whole batch: each message comes back after its visibility.
      log.error('local queue: the function failed', error, { queue: name, function: fn.name });
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
          if (batch.length >= fn.batchSize) break;
          if (m.visibleAt > now) continue;
          if (m.receives >= consumer.maxReceives) {
            messages.delete(m.id);
            deadLetters.push(m.body);
            if (options.dataDir) keepDeadLetters(localDeadLetterFile(options.dataDir, name), [m.body]);
            log.error('local queue: a message went to the dead letters', undefined, { queue: name, messageId: m.id, receives: m.receives });
            continue;
          }
          m.receives++;
          m.receipt = randomUUID();
          // Not scaled: a message must stay hidden while its attempt runs, as on SQS.
          m.visibleAt = now + consumer.visibilitySeconds * 1000;
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
    name,
    deadLetters,
    size: () => messages.size,
    pending: () => [...messages.values()].map((m) => m.body),
    async send(bodies, delaySeconds = 0) {
      const now = Date.now();
      for (const body of bodies) {
        const id = randomUUID();
        messages.set(id, { id, body, sentAt: now, receives: 0, visibleAt: now + waitMs(delaySeconds) });
      }
    },
    async retryAfter(receiptHandle, seconds) {
      for (const m of messages.values()) {
        if (m.receipt === receiptHandle) {
          m.visibleAt = Date.now() + waitMs(seconds);
          return;
        }
      }
      throw new Error(`local queue ${name}: no message with that receipt handle`);
    },
    async stop() {
      stopped = true;
      stopping.abort();
      await loop;
      await Promise.all(running);
      useLocalQueue(name, undefined, queue);
    },
  };
  useLocalQueue(name, queue);
  const loop = receive ? poll() : Promise.resolve();
  return queue;
};

/** Every queue of the stack, each with its consumer, as deployed (per-queue options by name). */
export const startLocalQueues = (options: Partial<Record<QueueName, LocalQueueOptions>> = {}): LocalQueue[] =>
  CONSUMERS.map(({ queue }) => startLocalQueue(queue, options[queue]));
