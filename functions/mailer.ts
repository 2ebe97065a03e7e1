import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { db } from '../lib/db/service.ts';
import { log } from '../lib/log.ts';
import { deliver } from '../lib/mail/outbox.ts';
import { createMailer } from '../lib/mail/transports.ts';

/**
 * The mailer: the table's stream (NEW_IMAGE) calls it with batches of records; each new outbox
 * message is delivered (lib/mail/outbox.ts). Failed records are reported by sequence number
 * (ReportBatchItemFailures), so only they are retried. Locally infra/stream-poller.ts calls it.
 */
const mailer = createMailer();

/** How many messages of one batch are sent at the same time. */
const CONCURRENCY = 5;

/** The outbox message id of a record that inserted one, else undefined. */
export const outboxMessageId = (record: DynamoDBRecord): string | undefined => {
  if (record.eventName !== 'INSERT') return undefined;
  const image = record.dynamodb?.NewImage;
  if (image?.__edb_e__?.S !== 'outboxMessage') return undefined;
  return image.messageId?.S;
};

export const handler = async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  const records = event.Records;
  const failed = new Set<number>();
  let next = 0;
  const work = async () => {
    for (let i = next++; i < records.length; i = next++) {
      const record = records[i] as DynamoDBRecord;
      const messageId = outboxMessageId(record);
      if (messageId === undefined) continue;
      try {
        await deliver(db(), mailer, messageId, new Date());
      } catch (error) {
        log.error('outbox delivery failed, will retry', error, { messageId, sequenceNumber: record.dynamodb?.SequenceNumber });
        failed.add(i);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, records.length) }, work));
  return {
    batchItemFailures: [...failed]
      .sort((a, b) => a - b)
      .map((i) => ({ itemIdentifier: records[i]?.dynamodb?.SequenceNumber ?? '' })),
  };
};
