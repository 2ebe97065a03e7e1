import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { log } from '#lib/core/log.ts';
import { db } from '#lib/db/service.ts';
import { newImageOf } from '#lib/db/stream-records.ts';
import { type NewEntry, fanOut } from '#lib/events/webhooks/fan-out.ts';
import { webhookQueue } from '#lib/events/webhooks/queue.ts';

/**
 * The webhook fan-out: the table's stream calls it with new audit entries (an event-source filter
 * passes only their INSERTs); each becomes one queue message per subscribed endpoint
 * (lib/events/webhooks/fan-out.ts). When a read or the queue fails, the invocation fails: the stream
 * retries the batch, halved each time (bisection), and its Errors alarm counts it. Messages
 * already sent go again: delivery is at least once, and receivers de-duplicate by `webhook-id`.
 * Locally infra/stream-poller.ts calls it.
 */
export const entryOf = (record: DynamoDBRecord): NewEntry | undefined => {
  const image = newImageOf(record, 'auditEntry');
  const teamId = image?.number('teamId');
  const entryId = image?.text('entryId');
  const action = image?.text('action');
  if (teamId === undefined || !Number.isSafeInteger(teamId) || !entryId || !action) return undefined;
  return { teamId, entryId, action };
};

export const handler = async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  const entries = event.Records.map(entryOf).filter((e) => e !== undefined);
  if (entries.length === 0) return { batchItemFailures: [] };
  try {
    const sent = await fanOut(db(), webhookQueue, entries);
    if (sent > 0) log.info('webhook messages queued', { entries: entries.length, messages: sent });
    return { batchItemFailures: [] };
  } catch (error) {
    log.error('webhook fan-out failed: the stream retries the batch', error, { entries: entries.length });
    throw error;
  }
};
