import type { DynamoDBBatchResponse, DynamoDBRecord } from 'aws-lambda';
import { log } from '#lib/core/log.ts';
import { WORK_QUEUES, type WorkFunction } from '#lib/http/background.ts';
import { type Queue, queueNamed } from '#lib/events/queues.ts';
import { consumersOf } from '#lib/events/stream-filters.ts';

/** The queue of each work function: deployed, SQS; locally, infra/local-queue.ts. */
const workQueue = (fn: WorkFunction): Queue => queueNamed(WORK_QUEUES[fn].queue);

/**
 * The table stream's one reader: each record goes, as the JSON Lambda delivered it, to the work
 * queue of every function whose filter it matches (lib/events/stream-filters.ts). When a queue refuses
 * a message, that record and every one after it are reported failed, so the stream sends them again
 * (Lambda resumes a shard at the first failure): the functions are idempotent, so the records some
 * queue already took are only done twice.
 */
export const dispatch = async (
  records: readonly DynamoDBRecord[],
  queueOf: (fn: WorkFunction) => Queue = workQueue,
): Promise<DynamoDBBatchResponse> => {
  const byFunction = new Map<WorkFunction, number[]>();
  records.forEach((record, index) => {
    for (const fn of consumersOf(record)) byFunction.set(fn, [...(byFunction.get(fn) ?? []), index]);
  });
  let firstFailed = records.length;
  await Promise.all(
    [...byFunction].map(async ([fn, indexes]) => {
      try {
        await queueOf(fn).send(indexes.map((i) => JSON.stringify(records[i])));
      } catch (error) {
        log.error('stream records not queued: the stream sends them again', error, { function: fn, records: indexes.length });
        firstFailed = Math.min(firstFailed, indexes[0] ?? firstFailed);
      }
    }),
  );
  return {
    batchItemFailures: records.slice(firstFailed).map((record) => ({ itemIdentifier: record.dynamodb?.SequenceNumber ?? '' })),
  };
};
