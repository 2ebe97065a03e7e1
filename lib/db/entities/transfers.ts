import { Entity, type EntityConfiguration } from 'electrodb';
import { ROLES } from './roles.ts';
import { KEYS, TTL_ATTRIBUTE } from './table.ts';

const idPadding = { length: 16, char: '0' } as const;

/**
 * A team's open ownership transfer (lib/teams/transfers.ts): one item per team, on a fixed key in the
 * team's own partition, so a new nomination replaces the open one with one Put (no read first) and
 * the team's deletion cleanup finds it with the team's other rows. It records both memberships as
 * they were when nominated: the accept changes them only while they still are (their roles and
 * member ids), and only while this item is still the same transfer (`transferId`) and unexpired.
 * `ttl` is housekeeping: every read checks `expiresAt` itself.
 */
export const transfer = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'transfer', version: '1', service: 'roster' },
      attributes: {
        teamId: { type: 'number', required: true, readOnly: true, padding: idPadding },
        /** A fresh UUID per nomination: what an accept, decline or cancel names, so a replaced one fails them. */
        transferId: { type: 'string', required: true, readOnly: true },
        nomineeUserUuid: { type: 'string', required: true, readOnly: true },
        nomineeMemberId: { type: 'number', required: true, readOnly: true },
        nomineeUserId: { type: 'number', required: true, readOnly: true },
        /** The nominee's role when nominated (ADMIN or MEMBER): the accept's condition on their membership. */
        nomineeRole: { type: ROLES, required: true, readOnly: true },
        nominatorUserUuid: { type: 'string', required: true, readOnly: true },
        nominatorMemberId: { type: 'number', required: true, readOnly: true },
        nominatorUserId: { type: 'number', required: true, readOnly: true },
        createdAt: { type: 'string', required: true, readOnly: true },
        expiresAt: { type: 'string', required: true, readOnly: true },
        ttl: { type: 'number', field: TTL_ATTRIBUTE },
      },
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: ['teamId'] }, sk: { field: KEYS.sk, composite: [] } },
      },
    },
    config,
  );
