import { Entity, type EntityConfiguration } from 'electrodb';
import { AUDIT_ACTIONS, AUDIT_TARGETS } from './audit-actions.ts';
import { INDEXES, KEYS, TTL_ATTRIBUTE } from './table.ts';

/**
 * One entry of a team's audit log, written in the same transaction as the change it records
 * (lib/events/audit.ts), so a change and its entry commit together or not at all. Its own partition per
 * team (key label `auditTeamId`): the team's item collection stays small, and a deleted team's
 * cleanup leaves its log to its retention. `entryId` is a UUIDv7: the sort key orders the log by
 * time, so the newest page is a Query in descending order. gsi1 holds the same entries by
 * (team, action) for the `action` filter: a Query on a key, never a filter over the whole log.
 * `ttl`: the retention (AUDIT_RETENTION_DAYS).
 */
export const auditEntry = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'auditEntry', version: '1', service: 'roster' },
      attributes: {
        teamId: { type: 'number', required: true, readOnly: true, padding: { length: 16, char: '0' }, label: 'auditTeamId' },
        entryId: { type: 'string', required: true, readOnly: true },
        action: { type: AUDIT_ACTIONS, required: true, readOnly: true },
        createdAt: { type: 'string', required: true, readOnly: true },
        /** Who made the change: the public user id and the e-mail address the session was signed in with. */
        actorUserId: { type: 'number', required: true, readOnly: true },
        actorEmail: { type: 'string', required: true, readOnly: true },
        targetType: { type: AUDIT_TARGETS, required: true, readOnly: true },
        /** The target's public id: the team's, the member's, the invite's; a transfer's nominee member id. */
        targetId: { type: 'number', required: true, readOnly: true },
        /** The invitee's address (invites), the member's user id (members). */
        targetEmail: { type: 'string', readOnly: true },
        targetUserId: { type: 'number', readOnly: true },
        /** `{ field: { before, after } }` as JSON: what changed (absent fields were absent). */
        changes: { type: 'string', required: true, readOnly: true },
        requestId: { type: 'string', readOnly: true },
        sourceIp: { type: 'string', readOnly: true },
        ttl: { type: 'number', field: TTL_ATTRIBUTE, required: true, readOnly: true },
      },
      indexes: {
        byTeam: { pk: { field: KEYS.pk, composite: ['teamId'] }, sk: { field: KEYS.sk, composite: ['entryId'] } },
        byAction: {
          index: 'gsi1',
          pk: { field: INDEXES.gsi1.pk, composite: ['teamId', 'action'] },
          sk: { field: INDEXES.gsi1.sk, composite: ['entryId'] },
        },
      },
    },
    config,
  );
