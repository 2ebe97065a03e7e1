import { config } from '#lib/core/config.ts';
import { inFlight } from '#lib/core/in-flight.ts';
import { log } from '#lib/core/log.ts';
import { addDays, expirySeconds } from '#lib/core/time.ts';
import { readTogether } from '#lib/db/batch-read.ts';
import { untilProcessed } from '#lib/db/pages.ts';
import type { Db } from '#lib/db/service.ts';
import type { DeliveryOrder, WebhookQueue } from './queue.ts';

/** An audit entry to send, as the table's stream or the sweep's Query shows it. */
export interface NewEntry {
  teamId: number;
  entryId: string;
  action: string;
  /** When the change was made (ISO 8601): an endpoint gets the events from its own creation on. */
  createdAt: string;
}

/** Teams whose endpoints are read at the same time. */
const TEAMS_IN_FLIGHT = 10;

/** Receipt BatchWriteItems (25 receipts each) in flight at once. */
const RECEIPT_WRITES_IN_FLIGHT = 4;

/**
 * The messages of audit entries (docs/webhooks.md): for each entry, one per endpoint of its team
 * that subscribes to its action and existed when the change was made. One Query of each team's
 * webhook partition, however many of its entries the batch holds (a team has at most
 * MAX_WEBHOOK_ENDPOINTS endpoints: one page). Orders come out in the entries' order.
 */
export const ordersFor = async (db: Db, entries: readonly NewEntry[]): Promise<DeliveryOrder[]> => {
  const teams = [...new Set(entries.map((e) => e.teamId))];
  const endpoints = new Map<number, { endpointId: number; events: string[]; createdAt: string }[]>();
  await inFlight(teams, TEAMS_IN_FLIGHT, async (teamId) => {
    const { data } = await db.entities.webhookEndpoint.query
      .byTeam({ teamId })
      .go({ pages: 'all', attributes: ['endpointId', 'events', 'createdAt'] });
    endpoints.set(teamId, data);
  });
  return entries.flatMap(({ teamId, entryId, action, createdAt }) =>
    (endpoints.get(teamId) ?? [])
      .filter((e) => e.events.includes(action) && e.createdAt <= createdAt)
      .map((e) => ({ teamId, endpointId: e.endpointId, entryId })),
  );
};

const entryKey = (o: { teamId: number; entryId: string }) => `${o.teamId} ${o.entryId}`;

/**
 * Enqueues the messages of `entries` that no one has sent yet, and writes a receipt for each
 * entry sent (lib/db/entities/webhooks.ts `webhookFanout`): the stream's fan-out and the sweep
 * (./sweep.ts) both come here, and each skips what the other sent. The receipts are read (one
 * BatchGetItem) only when there are messages, so a team without endpoints pays nothing more.
 * Throws when a read or the queue fails: the caller tries again. A receipt that cannot be written
 * is logged, not thrown: the messages are out, and the sweep sends that entry once more at worst
 * (delivery is at least once; receivers de-duplicate by `webhook-id`).
 * Returns how many entries it sent, and in how many messages.
 */
export const fanOut = async (
  db: Db,
  queue: () => WebhookQueue,
  entries: readonly NewEntry[],
  now = new Date(),
): Promise<{ entries: number; messages: number }> => {
  const orders = await ordersFor(db, entries);
  if (orders.length === 0) return { entries: 0, messages: 0 };
  const unique = [...new Map(orders.map((o) => [entryKey(o), { teamId: o.teamId, entryId: o.entryId }])).values()];
  const receipts = await readTogether(
    db,
    unique.map((key) => [db.entities.webhookFanout, key] as const),
  );
  const sent = new Set(receipts.filter((r) => r !== null).map(entryKey));
  const fresh = orders.filter((o) => !sent.has(entryKey(o)));
  if (fresh.length === 0) return { entries: 0, messages: 0 };
  await queue().send(fresh);
  const ttl = expirySeconds(addDays(now, config.webhookDeliveryLogDays));
  const written = unique.filter((key) => !sent.has(entryKey(key))).map((key) => ({ ...key, ttl }));
  try {
    // ElectroDB splits them into BatchWriteItems of 25, a few at a time; DynamoDB hands back the keys it left.
    await untilProcessed(written, async (items) => {
      const { unprocessed } = await db.entities.webhookFanout.put(items).go({ concurrency: RECEIPT_WRITES_IN_FLIGHT });
      const left = new Set(unprocessed.map(entryKey));
      return { unprocessed: items.filter((item) => left.has(entryKey(item))) };
    });
  } catch (error) {
    log.error('webhook fan-out receipts not written: the sweep may send these entries again', error, { entries: written.length });
  }
  return { entries: written.length, messages: fresh.length };
};
