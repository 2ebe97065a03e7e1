import type { DynamoDBRecord, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { log } from '#lib/core/log.ts';
import { WORK_QUEUES, type WorkFunction, workRetrySeconds } from '#lib/http/background.ts';
import { queueNamed } from '#lib/events/queues.ts';

/**
 * The work functions' side of their queues: each message is a stream record as the stream's reader
 * queued it (lib/events/stream-dispatch.ts). A message whose work failed is reported failed after its
 * visibility is set to workRetrySeconds of its receive count, so it comes back within seconds of a
 * recovery rather than after the queue's visibility timeout; after WORK_QUEUES' maxReceives the queue
 * moves it to its dead letters. A message that is not a record is logged and dropped.
 */
export interface QueuedRecord {
  readonly messageId: string;
  readonly record: DynamoDBRecord;
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
 * Runs `work` on the records of `event` (for function `fn`), which answers the message ids that
 * failed (or throws: all of them failed), and answers SQS's partial batch response.
 */
export const workOnQueuedRecords = async (
  fn: WorkFunction,
  event: SQSEvent,
  work: (records: readonly QueuedRecord[]) => Promise<readonly string[]>,
): Promise<SQSBatchResponse> => {
  const queued: QueuedRecord[] = [];
  for (const message of event.Records) {
    const record = recordOf(message.body);
    if (record) queued.push({ messageId: message.messageId, record });
    else log.error('queued message dropped: not a stream record', undefined, { function: fn, messageId: message.messageId });
  }
  let failed: ReadonlySet<string>;
  try {
    failed = new Set(await work(queued));
  } catch (error) {
    log.error('queued work failed: every record of the batch comes back', error, { function: fn, records: queued.length });
    failed = new Set(queued.map((q) => q.messageId));
  }
  const failures = event.Records.filter((message) => failed.has(message.messageId));
  await Promise.all(
    failures.map(async (message) => {
      try {
        await queueNamed(WORK_QUEUES[fn].queue).retryAfter(
          message.receiptHandle,
          workRetrySeconds(Number(message.attributes.ApproximateReceiveCount) || 1),
        );
      } catch (error) {
        // Then it comes back after the queue's visibility timeout.
        log.error('queued message visibility not set', error, { function: fn, messageId: message.messageId });
      }
    }),
  );
  return { batchItemFailures: failures.map((message) => ({ itemIdentifier: message.messageId })) };
};
