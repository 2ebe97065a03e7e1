import { randomUUID } from 'node:crypto';
import type { DynamoDBRecord, SQSEvent } from 'aws-lambda';

/**
 * The SQS event a work function receives when the stream's reader (lib/events/stream-dispatch.ts)
 * has queued `records`: one message each, its body the record's JSON, received `receives` times.
 */
export const queuedEvent = (records: readonly unknown[], receives = 1): SQSEvent => ({
  Records: records.map((record) => ({
    messageId: randomUUID(),
    receiptHandle: randomUUID(),
    body: JSON.stringify(record as DynamoDBRecord),
    attributes: {
      ApproximateReceiveCount: String(receives),
      SentTimestamp: String(Date.now()),
      SenderId: 'test',
      ApproximateFirstReceiveTimestamp: String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:local:000000000000:test',
    awsRegion: 'local',
  })),
});
