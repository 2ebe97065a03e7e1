import { Entity, type EntityConfiguration } from 'electrodb';
import { ROLES } from './roles.ts';
import { INDEXES, KEYS } from './table.ts';

const idPadding = { length: 16, char: '0' } as const;

/**
 * A team. `ownerCount` moves in the same transaction as every change that touches OWNER; joins and
 * leaves of other roles do not write this item (no hot item on the join path). No member count:
 * it would put every join of a team on this one key.
 */
export const team = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'team', version: '1', service: 'roster' },
      attributes: {
        teamId: { type: 'number', required: true, readOnly: true, padding: idPadding },
        name: { type: 'string', required: true },
        slug: { type: 'string', required: true },
        logo: { type: 'string' },
        ownerCount: { type: 'number', required: true },
        /** Every team route answers an aal1 session 403 `mfa_required` (docs/mfa.md). */
        requireMfa: { type: 'boolean' },
        /** The domains the team claims (docs/domains.md): each claim moves it, at most MAX_DOMAINS. */
        domainCount: { type: 'number' },
        createdAt: { type: 'string', required: true, readOnly: true },
        updatedAt: { type: 'string', required: true },
      },
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: ['teamId'] }, sk: { field: KEYS.sk, composite: [] } },
      },
    },
    config,
  );

/** One item per slug: its conditional create is what keeps slugs unique. */
export const slugClaim = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'slugClaim', version: '1', service: 'roster' },
      attributes: {
        slug: { type: 'string', required: true, readOnly: true },
        teamId: { type: 'number', required: true, readOnly: true },
      },
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: ['slug'] }, sk: { field: KEYS.sk, composite: [] } },
      },
    },
    config,
  );

/**
 * A user's membership of a team. Keyed by (team, user), so one membership per pair is the key
 * itself; gsi1 lists a user's teams and gsi2 a team's members, both in creation (id) order.
 */
export const membership = (config?: EntityConfiguration) =>
  new Entity(
    {
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
    },
    config,
  );

/**
 * The cleanup job of a deleted team, written in the deletion's transaction. The table's stream
 * (through its reader and the cleanup queue) hands its INSERT and each MODIFY to functions/team-cleanup.ts, which removes the team's rows in
 * time-boxed runs, records progress here (the MODIFY that starts the next run) and deletes this
 * item when nothing is left (lib/teams/cleanup.ts). The key's label keeps it out of the team's own
 * partition, so "the team's partition is empty" means exactly that.
 */
export const teamCleanup = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'teamCleanup', version: '1', service: 'roster' },
      attributes: {
        teamId: { type: 'number', required: true, readOnly: true, padding: idPadding, label: 'cleanupTeamId' },
        slug: { type: 'string', required: true, readOnly: true },
        deletedAt: { type: 'string', required: true, readOnly: true },
        /** Runs that ended with work left (each one's update is the MODIFY that starts the next). */
        runs: { type: 'number' },
        /** Items deleted so far, over all runs. */
        deleted: { type: 'number' },
        updatedAt: { type: 'string' },
        /**
         * gsi3's sort key (ISO 8601): when the cleanup sweep (lib/teams/cleanup-sweep.ts) starts the
         * job again unless a run touched it first (each run sets it anew). A new job's is given at
         * its creation; jobs written before gsi3 held them have none and are not swept.
         */
        dueAt: { type: 'string' },
      },
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: ['teamId'] }, sk: { field: KEYS.sk, composite: [] } },
        /** Every job, by when it is due: one partition, as jobs are few and short-lived. */
        byDue: { index: 'gsi3', pk: { field: INDEXES.gsi3.pk, composite: [] }, sk: { field: INDEXES.gsi3.sk, composite: ['dueAt'] } },
      },
    },
    config,
  );
