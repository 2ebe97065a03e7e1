import { Entity, type EntityConfiguration } from 'electrodb';
import { ROLES } from '../../rules.ts';
import { INDEXES, KEYS } from '../table.ts';

const idPadding = { length: 16, char: '0' } as const;

/** A team. `ownerCount` moves in the same transaction as every role change that touches OWNER. */
export const team = (config?: EntityConfiguration) =>
  new Entity({
  model: { entity: 'team', version: '1', service: 'roster' },
  attributes: {
    teamId: { type: 'number', required: true, readOnly: true, padding: idPadding },
    name: { type: 'string', required: true },
    slug: { type: 'string', required: true },
    logo: { type: 'string' },
    ownerCount: { type: 'number', required: true },
    memberCount: { type: 'number', required: true },
    createdAt: { type: 'string', required: true, readOnly: true },
    updatedAt: { type: 'string', required: true },
  },
  indexes: {
    primary: { pk: { field: KEYS.pk, composite: ['teamId'] }, sk: { field: KEYS.sk, composite: [] } },
  },
}, config);

/** One item per slug: its conditional create is what keeps slugs unique. */
export const slugClaim = (config?: EntityConfiguration) =>
  new Entity({
  model: { entity: 'slugClaim', version: '1', service: 'roster' },
  attributes: {
    slug: { type: 'string', required: true, readOnly: true },
    teamId: { type: 'number', required: true, readOnly: true },
  },
  indexes: {
    primary: { pk: { field: KEYS.pk, composite: ['slug'] }, sk: { field: KEYS.sk, composite: [] } },
  },
}, config);

/**
 * A user's membership of a team. Keyed by (team, user), so one membership per pair is the key
 * itself; gsi1 lists a user's teams and gsi2 a team's members, both in creation (id) order.
 */
export const membership = (config?: EntityConfiguration) =>
  new Entity({
  model: { entity: 'membership', version: '1', service: 'roster' },
  attributes: {
    teamId: { type: 'number', required: true, readOnly: true, padding: idPadding },
    userUuid: { type: 'string', required: true, readOnly: true },
    memberId: { type: 'number', required: true, readOnly: true, padding: idPadding },
    userId: { type: 'number', required: true, readOnly: true },
    role: { type: ROLES, required: true },
    createdAt: { type: 'string', required: true, readOnly: true },
    updatedAt: { type: 'string', required: true },
  },
  indexes: {
    primary: { pk: { field: KEYS.pk, composite: ['teamId'] }, sk: { field: KEYS.sk, composite: ['userUuid'] } },
    byUser: {
      index: 'gsi1',
      pk: { field: INDEXES.gsi1.pk, composite: ['userUuid'] },
      sk: { field: INDEXES.gsi1.sk, composite: ['memberId'] },
    },
    byTeam: {
      index: 'gsi2',
      pk: { field: INDEXES.gsi2.pk, composite: ['teamId'] },
      sk: { field: INDEXES.gsi2.sk, composite: ['memberId'] },
    },
  },
}, config);
