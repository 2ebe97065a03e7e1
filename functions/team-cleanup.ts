import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { db } from '#lib/db/service.ts';
import { runCleanupJobs } from '#lib/teams/cleanup.ts';

/**
 * The cleanup of deleted teams: the table's stream calls it with the `teamCleanup` jobs' INSERT
 * and MODIFY records (an event-source filter passes only those); lib/teams/cleanup.ts does the work
 * within the invocation's time. Locally infra/stream-poller.ts calls it.
 */
export const handler = (event: DynamoDBStreamEvent, context: Context): Promise<DynamoDBBatchResponse> =>
  runCleanupJobs(db(), event.Records, () => context.getRemainingTimeInMillis());
