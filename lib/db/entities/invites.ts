import { randomInt } from 'node:crypto';
import { Entity, type EntityConfiguration } from 'electrodb';
import { ROLES } from './roles.ts';
import { INDEXES, KEYS, TTL_ATTRIBUTE } from './table.ts';

const idPadding = { length: 16, char: '0' } as const;

/**
 * Partitions of gsi3 per expiry hour: invites created in one burst expire in the same hour, and a
 * GSI partition takes about 1,000 writes a second, so 32 of them take 10,000 invites a second with
 * room to spare. The sweeper queries all 32 of each hour.
 */
export const EXPIRY_SHARDS = 32;

/** gsi3's partition key: `2026-12-02T14#07` (hour of expiry, shard). */
export const expiryBucketOf = (expiresAt: string, shard: number): string => `${expiresAt.slice(0, 13)}#${String(shard).padStart(2, '0')}`;

/**
 * An invitation, keyed by its UUID (the invitee's accept/decline/preview paths). gsi1 lists a
 * team's invites and gsi2 an e-mail's, each by status then id, so "pending" is a key prefix.
 * EXPIRED is PENDING past its expiry, once the sweeper (lib/teams/invites/sweep.ts) has moved it out of
 * that prefix; a re-invite or resend makes it PENDING again. gsi3 holds only PENDING invites, by
 * the hour they expire in (sharded) and expiry: where the sweeper finds them.
 */
export const invite = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'invite', version: '1', service: 'roster' },
      attributes: {
        inviteUuid: { type: 'string', required: true, readOnly: true },
        inviteId: { type: 'number', required: true, readOnly: true, padding: idPadding },
        teamId: { type: 'number', required: true, readOnly: true, padding: idPadding },
        email: { type: 'string', required: true, readOnly: true },
        role: { type: ROLES, required: true },
        status: { type: ['PENDING', 'EXPIRED', 'ACCEPTED', 'DECLINED', 'REVOKED'] as const, required: true },
        invitedByUuid: { type: 'string', required: true },
        expiresAt: { type: 'string', required: true },
        /**
         * gsi3's partition: the hour of `expiresAt` and a random shard, `2026-12-02T14#07`, made with
         * every write of expiresAt. Absent on invites written before gsi3 existed.
         */
        expiryBucket: {
          type: 'string',
          watch: ['expiresAt'],
          set: (_, { expiresAt }: { expiresAt?: string }) =>
            expiresAt === undefined ? undefined : expiryBucketOf(expiresAt, randomInt(EXPIRY_SHARDS)),
        },
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
        byExpiry: {
          index: 'gsi3',
          // Sparse: a write that sets the status (with every gsi3 composite) keeps the keys only while PENDING.
          condition: (a) => a.status === 'PENDING',
          pk: { field: INDEXES.gsi3.pk, composite: ['expiryBucket'] },
          sk: { field: INDEXES.gsi3.sk, composite: ['expiresAt'] },
        },
      },
    },
    config,
  );

/** At most one pending invite per (team, e-mail): re-inviting updates the invite this points to. */
export const pendingInvite = (config?: EntityConfiguration) =>
  new Entity(
    {
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
    },
    config,
  );

/**
 * The composites a write of an invite's status names, so that ElectroDB rewrites the status in
 * gsi1's and gsi2's keys and keeps gsi3's keys only while PENDING. They become conditions too
 * (each must still be as read). gsi3's are left out for invites written before it existed.
 */
export const statusComposites = (i: {
  teamId: number;
  email: string;
  inviteId: number;
  expiresAt: string;
  expiryBucket?: string | undefined;
}) => ({
  teamId: i.teamId,
  email: i.email,
  inviteId: i.inviteId,
  ...(i.expiryBucket === undefined ? {} : { expiresAt: i.expiresAt, expiryBucket: i.expiryBucket }),
});

/**
 * The invite sweeper's watermark (lib/teams/invites/sweep.ts): every gsi3 hour before `sweptBefore` has
 * been swept empty, so a run starts there. One item; only the scheduled sweeper writes it.
 */
export const inviteSweep = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'inviteSweep', version: '1', service: 'roster' },
      attributes: {
        /** An hour, `2026-12-02T14`. */
        sweptBefore: { type: 'string', required: true },
        updatedAt: { type: 'string', required: true },
      },
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: [] }, sk: { field: KEYS.sk, composite: [] } },
      },
    },
    config,
  );
