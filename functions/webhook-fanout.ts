import type { DynamoDBRecord, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { log } from '#lib/core/log.ts';
import { db } from '#lib/db/service.ts';
import { newImageOf } from '#lib/db/stream-records.ts';
import { type NewEntry, fanOut } from '#lib/events/webhooks/fan-out.ts';
import { webhookQueue } from '#lib/events/webhooks/queue.ts';
import { workOnQueuedRecords } from '#lib/events/queued-records.ts';
import { WEBHOOK_FANOUT } from '#lib/http/background.ts';

/**
 * The webhook fan-out: its work queue (fed by the table stream's reader, lib/events/stream-dispatch.ts)
 * calls it with new audit entries' records; each becomes one webhook-queue message per subscribed
 * endpoint (lib/events/webhooks/fan-out.ts). When a read or the webhook queue fails, every record of
 * the batch comes back within seconds (lib/events/queued-records.ts), and after its last receive goes
 * to the dead letters; the webhook sweep (lib/events/webhooks/sweep.ts) sends what never got here.
 * An entry's receipt, written once its messages are out, keeps a retry, a replay or the sweep from
 * sending it twice; delivery is still at least once, and receivers de-duplicate by `webhook-id`. Locally infra/local-queue.ts calls it.
 */
export const entryOf = (record: DynamoDBRecord): NewEntry | undefined => {
  const image = newImageOf(record, 'auditEntry');
  const teamId = image?.number('teamId');
  const entryId = image?.text('entryId');
  const action = image?.text('action');
  const createdAt = image?.text('createdAt');
  if (teamId === undefined || !Number.isSafeInteger(teamId) || !entryId || !action || !createdAt) return undefined;
  return { teamId, entryId, action, createdAt };
};

export const handler = (event: SQSEvent): Promise<SQSBatchResponse> =>
  workOnQueuedRecords(WEBHOOK_FANOUT.name, event, async (queued) => {
    const entries = queued.map(({ record }) => entryOf(record)).filter((e) => e !== undefined);
    if (entries.length === 0) return [];
    const sent = await fanOut(db(), webhookQueue, entries);
    if (sent.messages > 0) log.info('webhook messages queued', { entries: sent.entries, messages: sent.messages });
    return [];
  });
