import { ChangeMessageVisibilityCommand, SQSClient, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { config } from '#lib/core/config.ts';

/**
 * Roster's SQS queues, as the code sends to them: the webhook queue (lib/events/webhooks/queue.ts)
 * and the work queues between the table's stream and the mailer, the team cleanup and the webhook
 * fan-out (lib/http/background.ts WORK_QUEUES). Deployed, each is an SQS queue whose URL the stack
 * passes in `<NAME>_QUEUE_URL`; locally, infra/local-queue.ts runs each in the server's process and
 * registers it here (useLocalQueue).
 */
export const QUEUE_NAMES = ['webhook', 'mail', 'cleanup', 'fanout'] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

export interface Queue {
  /** Enqueues the bodies, received no sooner than `delaySeconds` from now (at most 900); throws when any of them was not taken. */
  send(bodies: readonly string[], delaySeconds?: number): Promise<void>;
  /** A received message that failed comes back after `seconds` (its visibility timeout). */
  retryAfter(receiptHandle: string, seconds: number): Promise<void>;
}

/** The environment variable that holds a queue's URL where it is deployed. */
export const queueUrlVariable = (name: QueueName): string => `${name.toUpperCase()}_QUEUE_URL`;

/** SQS takes at most 10 messages per SendMessageBatch. */
const SQS_BATCH = 10;

/** The deployed queue: SendMessageBatch and ChangeMessageVisibility on `queueUrl`. */
export const sqsQueue = (queueUrl: string, client = new SQSClient({ region: config.region })): Queue => ({
  async send(bodies, delaySeconds) {
    const batches: string[][] = [];
    for (let i = 0; i < bodies.length; i += SQS_BATCH) batches.push(bodies.slice(i, i + SQS_BATCH));
    await Promise.all(
      batches.map(async (batch) => {
        const result = await client.send(
          new SendMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: batch.map((body, i) => ({
              Id: String(i),
              MessageBody: body,
              ...(delaySeconds ? { DelaySeconds: delaySeconds } : {}),
            })),
          }),
        );
        const failed = result.Failed ?? [];
        if (failed.length > 0)
          throw new Error(`queue ${queueUrl} refused ${failed.length} messages: ${failed.map((f) => f.Code).join(', ')}`);
      }),
    );
  },
  async retryAfter(receiptHandle, seconds) {
    await client.send(new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: receiptHandle, VisibilityTimeout: seconds }));
  },
});

const locals = new Map<QueueName, Queue>();
const deployed = new Map<QueueName, Queue>();

/**
 * Local mode: the in-process queue `name` (infra/local-queue.ts) takes the messages. `undefined`
 * removes `stopped`, if it is still the one in use (a queue started after it stays).
 */
export const useLocalQueue = (name: QueueName, queue: Queue | undefined, stopped?: Queue): void => {
  if (queue === undefined) {
    if (locals.get(name) === stopped) locals.delete(name);
    return;
  }
  locals.set(name, queue);
};

/** The queue this process sends `name`'s messages to: SQS when its URL is set, else the local one. */
export const queueNamed = (name: QueueName): Queue => {
  const url = process.env[queueUrlVariable(name)] || undefined;
  if (url) {
    let queue = deployed.get(name);
    if (!queue) deployed.set(name, (queue = sqsQueue(url)));
    return queue;
  }
  const local = locals.get(name);
  if (!local) throw new Error(`no ${name} queue: ${queueUrlVariable(name)} is unset and no local queue runs in this process`);
  return local;
};
