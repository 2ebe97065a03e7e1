import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { db } from '#lib/db/service.ts';
import { workOnQueuedRecords } from '#lib/events/queued-records.ts';
import { TEAM_CLEANUP } from '#lib/http/background.ts';
import { runCleanupJobs } from '#lib/teams/cleanup.ts';

/**
 * The cleanup of deleted teams: its work queue (fed by the table stream's reader,
 * lib/events/stream-dispatch.ts) calls it with the `teamCleanup` jobs' INSERT and MODIFY records;
 * lib/teams/cleanup.ts runs the jobs side by side within the invocation's time. Locally
 * infra/local-queue.ts calls it.
 */
export const handler = (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
  workOnQueuedRecords(TEAM_CLEANUP.name, event, (queued) => runCleanupJobs(db(), queued, () => context.getRemainingTimeInMillis()));
