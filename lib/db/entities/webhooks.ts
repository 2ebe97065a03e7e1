import { Entity, type EntityConfiguration } from 'electrodb';
import { INDEXES, KEYS, TTL_ATTRIBUTE } from './table.ts';

const idPadding = { length: 16, char: '0' } as const;

/**
 * A team's webhook endpoint (lib/events/webhooks/endpoints.ts): where the team's audit events are sent,
 * which ones, and the secret they are signed with. Its own partition per team (key label
 * `webhookTeamId`), apart from the team's item collection: a team's list is one Query of it, in
 * creation order (`endpointId` is a time-ordered public id). The secret is stored as issued
 * (`whsec_…`): delivery must sign with it, so the table (encrypted at rest, reachable only by
 * the functions the stack grants) is its trust boundary, as for sessions and tokens.
 */
export const webhookEndpoint = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'webhookEndpoint', version: '1', service: 'roster' },
      attributes: {
        teamId: { type: 'number', required: true, readOnly: true, padding: idPadding, label: 'webhookTeamId' },
        endpointId: { type: 'number', required: true, readOnly: true, padding: idPadding },
        url: { type: 'string', required: true, readOnly: true },
        /** Audit actions (AUDIT_ACTIONS), in the order registered: ElectroDB lists take no enum. */
        events: { type: 'list', items: { type: 'string' }, required: true, readOnly: true },
        secret: { type: 'string', required: true, readOnly: true },
        /** Who registered it (public user id), for the list. */
        createdByUserId: { type: 'number', required: true, readOnly: true },
        createdAt: { type: 'string', required: true, readOnly: true },
      },
      indexes: {
        byTeam: { pk: { field: KEYS.pk, composite: ['teamId'] }, sk: { field: KEYS.sk, composite: ['endpointId'] } },
      },
    },
    config,
  );

/**
 * How many endpoints a team has: one item in the team's webhook partition, counted up and down in
 * the transaction that creates or deletes an endpoint, under the condition that keeps it at most
 * MAX_WEBHOOK_ENDPOINTS. Counting, not reading the list first, is what holds under racing creates.
 * It is also the team's place in the webhook sweep (lib/events/webhooks/sweep.ts): a create writes
 * its gsi3 keys (every team that has had an endpoint, by id) and, the first time, `sweepFrom`.
 */
export const webhookCount = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'webhookCount', version: '1', service: 'roster' },
      attributes: {
        teamId: { type: 'number', required: true, readOnly: true, padding: idPadding, label: 'webhookTeamId' },
        endpoints: { type: 'number' },
        /**
         * The sweep's watermark (ISO 8601): the team's audit entries from this instant on are not
         * checked yet. Set by the first create (never moved back by a later one), moved on by the sweep.
         */
        sweepFrom: { type: 'string' },
        /** For a sweep run cut short: the last entry it checked of the stretch from `sweepFrom`. */
        sweepAfter: { type: 'string' },
      },
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: ['teamId'] }, sk: { field: KEYS.sk, composite: [] } },
        /** Every team that has had an endpoint: one gsi3 partition, as such teams are few and the sweep reads them all. */
        bySweep: { index: 'gsi3', pk: { field: INDEXES.gsi3.pk, composite: [] }, sk: { field: INDEXES.gsi3.sk, composite: ['teamId'] } },
      },
    },
    config,
  );

/**
 * A receipt: the messages of this audit entry are on the webhook queue (lib/events/webhooks/fan-out.ts).
 * Written after they are sent, only for entries that had a subscribed endpoint, and read before
 * sending: the stream's fan-out and the sweep (lib/events/webhooks/sweep.ts) each skip an entry the
 * other already sent, and the sweep finds the entries that have none. Its own partition per team
 * (key label `webhookFanout`), by entry id: the sweep reads the receipts of a stretch of the audit
 * log in one Query. `ttl`: WEBHOOK_DELIVERY_LOG_DAYS, as the delivery log.
 */
export const webhookFanout = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'webhookFanout', version: '1', service: 'roster' },
      attributes: {
        teamId: { type: 'number', required: true, readOnly: true, padding: idPadding, label: 'webhookFanout' },
        entryId: { type: 'string', required: true, readOnly: true },
        ttl: { type: 'number', field: TTL_ATTRIBUTE, required: true, readOnly: true },
      },
      indexes: {
        byTeam: { pk: { field: KEYS.pk, composite: ['teamId'] }, sk: { field: KEYS.sk, composite: ['entryId'] } },
      },
    },
    config,
  );

/**
 * One delivery attempt of one event to one endpoint (lib/events/webhooks/dispatch.ts): the endpoint's
 * delivery log, `GET …/webhooks/{id}/deliveries`. Its own partition per (team, endpoint) (key label
 * `webhookDeliveries`): the log is one Query, newest first (`deliveryId` is a UUIDv7), and the team
 * in the key means another team's endpoint id names nothing here. `ttl`: 30 days
 * (WEBHOOK_DELIVERY_LOG_DAYS); the event itself stays in the audit log for its retention.
 */
export const webhookDelivery = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'webhookDelivery', version: '1', service: 'roster' },
      attributes: {
        teamId: { type: 'number', required: true, readOnly: true, padding: idPadding, label: 'webhookDeliveries' },
        endpointId: { type: 'number', required: true, readOnly: true, padding: idPadding },
        deliveryId: { type: 'string', required: true, readOnly: true },
        /** The audit entry sent (the message's `webhook-id`) and its action. */
        entryId: { type: 'string', required: true, readOnly: true },
        action: { type: 'string', required: true, readOnly: true },
        /** 1 for the first attempt of a message, counted again from 1 by a replay. */
        attempt: { type: 'number', required: true, readOnly: true },
        replay: { type: 'boolean', required: true, readOnly: true },
        succeeded: { type: 'boolean', required: true, readOnly: true },
        /** The receiver's status, when it answered. */
        responseStatus: { type: 'number', readOnly: true },
        error: { type: 'string', readOnly: true },
        durationMs: { type: 'number', required: true, readOnly: true },
        createdAt: { type: 'string', required: true, readOnly: true },
        /** When the next attempt is due, for a failed one that will be retried. */
        nextAttemptAt: { type: 'string', readOnly: true },
        ttl: { type: 'number', field: TTL_ATTRIBUTE, required: true, readOnly: true },
      },
      indexes: {
        byEndpoint: { pk: { field: KEYS.pk, composite: ['teamId', 'endpointId'] }, sk: { field: KEYS.sk, composite: ['deliveryId'] } },
      },
    },
    config,
  );

/**
 * The webhook sweep's place in its list of teams (lib/events/webhooks/sweep.ts): a run whose time
 * ran out records the last team it finished, and the next run starts after it (and comes round to
 * the first teams at the end), so teams late in the list are not left behind. One item, in its own
 * partition (the constant key `sweep`), so the sweep's grant names it alone.
 */
export const webhookSweep = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'webhookSweep', version: '1', service: 'roster' },
      attributes: {
        sweep: { type: ['webhooks'] as const, required: true, readOnly: true, default: 'webhooks' },
        /** The team id the next run starts after. */
        resumeAfter: { type: 'number', required: true },
        updatedAt: { type: 'string', required: true },
      },
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: ['sweep'] }, sk: { field: KEYS.sk, composite: [] } },
      },
    },
    config,
  );
