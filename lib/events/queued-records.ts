import type { DynamoDBRecord, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { log } from '#lib/core/log.ts';
import { queueNamed } from '#lib/events/queues.ts';
import { WORK_QUEUES, WORK_REQUEUE_AFTER, WORK_REQUEUE_SECONDS, type WorkFunction, workRetrySeconds } from '#lib/http/background.ts';
import { isTransient } from '#lib/http/errors.ts';

/**
 * The work functions' side of their queues: each message is a stream record as the stream's reader
 * queued it (lib/events/stream-dispatch.ts). A message whose work failed is reported failed after its
 * visibility is set to workRetrySeconds of its receive count, so it comes back within seconds of a
 * recovery rather than after the queue's visibility timeout; after WORK_QUEUES' maxReceives the queue
 * moves it to its dead letters. One that failed WORK_REQUEUE_AFTER times for a reason that passes
 * (an outage) is queued again instead, so that no outage, however long, fills the dead letters. A
 * message that is not a record is logged and dropped.
 */
export interface QueuedRecord {
  readonly messageId: string;
  readonly record: DynamoDBRecord;
}

/** A record whose work is not done: why, if it threw (none: not settled yet, which passes with time). */
export interface WorkFailure {
  readonly messageId: string;
  readonly error?: unknown;
}

const recordOf = (body: string): DynamoDBRecord | undefined => {
  try {
    const parsed = JSON.parse(body) as unknown;
    return typeof parsed === 'object' && parsed !== null && 'dynamodb' in parsed ? (parsed as DynamoDBRecord) : undefined;
  } catch {
    return undefined;
  }
};

/**
 * Hands back a failed message: queued again as a new message when it failed WORK_REQUEUE_AFTER
 * times for a reason that passes (then it is done with here), else visible again after
 * workRetrySeconds. Answers whether SQS is to count it failed.
 */
const handBack = async (fn: WorkFunction, message: SQSRecord, error: unknown): Promise<boolean> => {
  const receives = Number(message.attributes.ApproximateReceiveCount) || 1;
  try {
    const queue = queueNamed(WORK_QUEUES[fn].queue);
    if (receives >= WORK_REQUEUE_AFTER && (error === undefined || isTransient(error))) {
      await queue.send([message.body], WORK_REQUEUE_SECONDS);
      log.info('queued work requeued after a long outage', { function: fn, messageId: message.messageId, receives });
      return false;
    }
    await queue.retryAfter(message.receiptHandle, workRetrySeconds(receives));
  } catch (cause) {
    // Then it comes back after the queue's visibility timeout.
    log.error('queued message not handed back', cause, { function: fn, messageId: message.messageId });
  }
  return true;
};

/**
 * Runs `work` on the records of `event` (for function `fn`), which answers those that failed (or
 * throws: all of them failed, for that reason), and answers SQS's partial batch response.
 */
export const workOnQueuedRecords = async (
  fn: WorkFunction,
  event: SQSEvent,
  work: (records: readonly QueuedRecord[]) => Promise<readonly WorkFailure[]>,
): Promise<SQSBatchResponse> => {
  const queued: QueuedRecord[] = [];
  for (const message of event.Records) {
    const record = recordOf(message.body);
    if (record) queued.push({ messageId: message.messageId, record });
    else log.error('queued message dropped: not a stream record', undefined, { function: fn, messageId: message.messageId });
  }
  let failures: readonly WorkFailure[];
  try {
    failures = await work(queued);
  } catch (error) {
    log.error('queued work failed: every record of the batch comes back', error, { function: fn, records: queued.length });
    failures = queued.map(({ messageId }) => ({ messageId, error }));
  }
  const why = new Map(failures.map((f) => [f.messageId, f.error]));
  const failed = await Promise.all(
    event.Records.filter((message) => why.has(message.messageId)).map(async (message) =>
      (await handBack(fn, message, why.get(message.messageId))) ? message.messageId : undefined,
    ),
  );
  return { batchItemFailures: failed.filter((id) => id !== undefined).map((itemIdentifier) => ({ itemIdentifier })) };
};
