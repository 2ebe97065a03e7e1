import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { db } from '../lib/db/service.ts';
import { log } from '../lib/log.ts';
import { type NewEntry, fanOut } from '../lib/webhooks/fan-out.ts';
import { webhookQueue } from '../lib/webhooks/queue.ts';

/**
 * The webhook fan-out: the table's stream calls it with new audit entries (an event-source filter
 * passes only their INSERTs); each becomes one queue message per subscribed endpoint
 * (lib/webhooks/fan-out.ts). When a read or the queue fails, the invocation fails: the stream
 * retries the batch, halved each time (bisection), and its Errors alarm counts it. Messages
 * already sent go again: delivery is at least once, and receivers de-duplicate by `webhook-id`.
 * Locally infra/stream-poller.ts calls it.
 */
export const entryOf = (record: DynamoDBRecord): NewEntry | undefined => {
  const image = record.dynamodb?.NewImage;
  if (record.eventName !== 'INSERT' || image?.__edb_e__?.S !== 'auditEntry') return undefined;
  const teamId = Number(image.teamId?.N);
  const entryId = image.entryId?.S;
  const action = image.action?.S;
  if (!Number.isSafeInteger(teamId) || !entryId || !action) return undefined;
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
