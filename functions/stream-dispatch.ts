import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { dispatch } from '#lib/events/stream-dispatch.ts';

/**
 * The table stream's one reader: the stream calls it with the records that start background work
 * (an event-source filter passes only those), and lib/events/stream-dispatch.ts sends each to its
 * work queue: the mailer's, the team cleanup's, the webhook fan-out's. Locally infra/stream-poller.ts
 * calls it.
 */
export const handler = (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => dispatch(event.Records);
