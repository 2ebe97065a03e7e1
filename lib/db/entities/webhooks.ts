import { Entity, type EntityConfiguration } from 'electrodb';
import { KEYS, TTL_ATTRIBUTE } from './table.ts';

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
 */
export const webhookCount = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'webhookCount', version: '1', service: 'roster' },
      attributes: {
        teamId: { type: 'number', required: true, readOnly: true, padding: idPadding, label: 'webhookTeamId' },
        endpoints: { type: 'number' },
      },
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: ['teamId'] }, sk: { field: KEYS.sk, composite: [] } },
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
