import { inFlight } from '#lib/core/in-flight.ts';
import type { Db } from '#lib/db/service.ts';
import type { DeliveryOrder, WebhookQueue } from './queue.ts';

/** A new audit entry, as the table's stream shows it. */
export interface NewEntry {
  teamId: number;
  entryId: string;
  action: string;
}

/** Teams whose endpoints are read at the same time. */
const TEAMS_IN_FLIGHT = 10;

/**
 * The messages of new audit entries (docs/webhooks.md): for each entry, one per endpoint of its
 * team that subscribes to its action. One Query of each team's webhook partition, however many of
 * its entries the batch holds (a team has at most MAX_WEBHOOK_ENDPOINTS endpoints: one page).
 * Orders come out in the entries' order.
 */
export const ordersFor = async (db: Db, entries: readonly NewEntry[]): Promise<DeliveryOrder[]> => {
  const teams = [...new Set(entries.map((e) => e.teamId))];
  const endpoints = new Map<number, { endpointId: number; events: string[] }[]>();
  await inFlight(teams, TEAMS_IN_FLIGHT, async (teamId) => {
    const { data } = await db.entities.webhookEndpoint.query.byTeam({ teamId }).go({ pages: 'all', attributes: ['endpointId', 'events'] });
    endpoints.set(teamId, data);
  });
  return entries.flatMap(({ teamId, entryId, action }) =>
    (endpoints.get(teamId) ?? []).filter((e) => e.events.includes(action)).map((e) => ({ teamId, endpointId: e.endpointId, entryId })),
  );
};

/**
 * Enqueues the messages of `entries` (the queue is looked up only when there are some). Throws
 * when a read or the queue fails: the fan-out queue hands the batch back.
 */
export const fanOut = async (db: Db, queue: () => WebhookQueue, entries: readonly NewEntry[]): Promise<number> => {
  const orders = await ordersFor(db, entries);
  if (orders.length > 0) await queue().send(orders);
  return orders.length;
};
