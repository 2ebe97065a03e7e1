import { Entity, type EntityConfiguration } from 'electrodb';
import { INDEXES, KEYS, TTL_ATTRIBUTE } from '../table.ts';
import { ROLES } from '../../rules.ts';

const idPadding = { length: 16, char: '0' } as const;

/**
 * An invitation, keyed by its UUID (the invitee's accept/decline/preview paths). gsi1 lists a
 * team's invites and gsi2 an e-mail's, each by status then id, so "pending" is a key prefix.
 */
export const invite = (config?: EntityConfiguration) =>
  new Entity({
  model: { entity: 'invite', version: '1', service: 'roster' },
  attributes: {
    inviteUuid: { type: 'string', required: true, readOnly: true },
    inviteId: { type: 'number', required: true, readOnly: true, padding: idPadding },
    teamId: { type: 'number', required: true, readOnly: true, padding: idPadding },
    email: { type: 'string', required: true, readOnly: true },
    role: { type: ROLES, required: true },
    status: { type: ['PENDING', 'ACCEPTED', 'DECLINED', 'REVOKED'] as const, required: true },
    invitedByUuid: { type: 'string', required: true },
    expiresAt: { type: 'string', required: true },
    createdAt: { type: 'string', required: true, readOnly: true },
    updatedAt: { type: 'string', required: true },
    ttl: { type: 'number', field: TTL_ATTRIBUTE },
  },
  indexes: {
    primary: { pk: { field: KEYS.pk, composite: ['inviteUuid'] }, sk: { field: KEYS.sk, composite: [] } },
    byTeam: {
      index: 'gsi1',
      pk: { field: INDEXES.gsi1.pk, composite: ['teamId'] },
      sk: { field: INDEXES.gsi1.sk, composite: ['status', 'inviteId'] },
    },
    byEmail: {
      index: 'gsi2',
      pk: { field: INDEXES.gsi2.pk, composite: ['email'] },
      sk: { field: INDEXES.gsi2.sk, composite: ['status', 'inviteId'] },
    },
  },
}, config);

/** At most one pending invite per (team, e-mail): re-inviting updates the invite this points to. */
export const pendingInvite = (config?: EntityConfiguration) =>
  new Entity({
  model: { entity: 'pendingInvite', version: '1', service: 'roster' },
  attributes: {
    teamId: { type: 'number', required: true, readOnly: true, padding: idPadding },
    email: { type: 'string', required: true, readOnly: true },
    inviteUuid: { type: 'string', required: true, readOnly: true },
    /** The same as its invite's, so TTL never leaves a claim that outlives what it points at for long. */
    ttl: { type: 'number', field: TTL_ATTRIBUTE },
  },
  indexes: {
    primary: { pk: { field: KEYS.pk, composite: ['teamId'] }, sk: { field: KEYS.sk, composite: ['email'] } },
  },
}, config);
