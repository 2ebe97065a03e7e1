import { Entity, type EntityConfiguration } from 'electrodb';
import { KEYS } from '../table.ts';

const idPadding = { length: 16, char: '0' } as const;

/**
 * A team's webhook endpoint (lib/webhooks/endpoints.ts): where the team's audit events are sent,
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
