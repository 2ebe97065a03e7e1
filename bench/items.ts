import { deepStrictEqual } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { config } from '#lib/core/config.ts';
import { db } from '#lib/db/service.ts';
import { addDays, epochSeconds, isoMillis } from '#lib/core/time.ts';
import type { MembershipItem, UserItem } from '#lib/db/items.ts';
import type { BulkWriter } from './bulk-write.ts';

/**
 * State written as items rather than through the API, where thousands are needed: the items the
 * use cases write (lib/teams/teams.ts createTeam, lib/teams/invites/create.ts createInvite), shaped by the entities
 * themselves. Through the API, a pool of 700 invites from as many teams took 40 s.
 */

type Item = Record<string, unknown>;

/**
 * Synthetic ids start far above the time-based ids of lib/core/ids.ts (about 2e14 now), so they never
 * meet a real one, and stay below 2^53.
 */
export const SYNTHETIC = { userId: 1e15, memberId: 3e15, teamId: 5e15 } as const;
let poolIds = 7e15;
const nextPoolId = (): number => ++poolIds;

/** A deterministic UUID (version 4 layout) for synthetic user `n`. */
export const syntheticUuid = (n: number): string => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

const pad = (n: number): string => String(n).padStart(16, '0');

/**
 * The item ElectroDB writes for a membership, built directly: ElectroDB's params() takes about
 * 30 µs an item, CPU that the million-membership load would take from DynamoDB Local.
 * checkMembershipItem holds it to ElectroDB's output.
 */
export const membershipItem = (m: MembershipItem): Item => ({
  teamId: m.teamId,
  userUuid: m.userUuid,
  memberId: m.memberId,
  userId: m.userId,
  role: m.role,
  createdAt: m.createdAt,
  updatedAt: m.updatedAt,
  pk: `$roster#teamid_${pad(m.teamId)}`,
  sk: `$membership_1#useruuid_${m.userUuid}`,
  gsi1pk: `$roster#useruuid_${m.userUuid}`,
  gsi1sk: `$membership_1#memberid_${pad(m.memberId)}`,
  gsi2pk: `$roster#teamid_${pad(m.teamId)}`,
  gsi2sk: `$membership_1#memberid_${pad(m.memberId)}`,
  __edb_e__: 'membership',
  __edb_v__: '1',
});

const itemOf = (params: unknown): Item => (params as { Item: Item }).Item;

export const checkMembershipItem = (m: MembershipItem): void => {
  deepStrictEqual(
    membershipItem(m),
    itemOf(db().entities.membership.put(m).params()),
    'bench membershipItem differs from what ElectroDB writes',
  );
};

/**
 * Adds `count` members (role MEMBER) with their users, numbered from `from`, to a team (the team
 * item keeps no member count, so it is not touched). Returns their membership ids, in join order.
 */
export const addSyntheticMembers = async (writer: BulkWriter, teamId: number, from: number, count: number): Promise<number[]> => {
  const now = isoMillis(new Date());
  const users: Item[] = [];
  const members: MembershipItem[] = [];
  for (let n = from; n < from + count; n++) {
    const userUuid = syntheticUuid(n);
    const user: UserItem = {
      userUuid,
      userId: SYNTHETIC.userId + n,
      email: `member-${n}@example.com`,
      firstName: `Member${n}`,
      lastName: 'Synthetic',
      passwordHash: 'synthetic: never signs in',
      createdAt: now,
      updatedAt: now,
    };
    users.push(itemOf(db().entities.user.put(user).params()));
    members.push({
      teamId,
      userUuid,
      memberId: SYNTHETIC.memberId + n,
      userId: SYNTHETIC.userId + n,
      role: 'MEMBER',
      createdAt: now,
      updatedAt: now,
    });
  }
  if (members[0]) checkMembershipItem(members[0]);
  await writer.write([...users, ...members.map(membershipItem)]);
  return members.map((m) => m.memberId);
};

/** The user an account is, as stored. */
export const storedUser = async (userUuid: string): Promise<UserItem> => {
  const { data } = await db().entities.user.get({ userUuid }).go();
  if (!data) throw new Error(`no user ${userUuid}`);
  return data;
};

/** What createTeam writes: the slug claim, the team, and its owner's membership with its id claim. */
export const teamItems = (owner: UserItem, slug: string, now: Date): { teamId: number; items: Item[] } => {
  const stamp = isoMillis(now);
  const teamId = nextPoolId();
  const memberId = nextPoolId();
  const e = db().entities;
  return {
    teamId,
    items: [
      itemOf(e.slugClaim.put({ slug, teamId }).params()),
      itemOf(e.team.put({ teamId, name: `Team ${slug}`, slug, ownerCount: 1, createdAt: stamp, updatedAt: stamp }).params()),
      itemOf(e.idClaim.put({ kind: 'membership', id: memberId }).params()),
      itemOf(
        e.membership
          .put({ teamId, userUuid: owner.userUuid, memberId, userId: owner.userId, role: 'OWNER', createdAt: stamp, updatedAt: stamp })
          .params(),
      ),
    ],
  };
};

/** What createInvite writes for a new invite (its outbox message aside: no mailer runs here). */
export const inviteItems = (
  teamId: number,
  email: string,
  inviter: UserItem,
  now: Date,
): { inviteId: number; inviteUuid: string; items: Item[] } => {
  const stamp = isoMillis(now);
  const expires = addDays(now, config.inviteDays);
  const ttl = epochSeconds(addDays(expires, config.endedInviteRetentionDays));
  const inviteUuid = randomUUID();
  const inviteId = nextPoolId();
  const e = db().entities;
  return {
    inviteId,
    inviteUuid,
    items: [
      itemOf(e.pendingInvite.put({ teamId, email, inviteUuid, ttl }).params()),
      itemOf(e.idClaim.put({ kind: 'invite', id: inviteId }).params()),
      itemOf(
        e.invite
          .put({
            inviteUuid,
            inviteId,
            teamId,
            email,
            role: 'MEMBER',
            status: 'PENDING',
            invitedByUuid: inviter.userUuid,
            expiresAt: isoMillis(expires),
            createdAt: stamp,
            updatedAt: stamp,
            ttl,
          })
          .params(),
      ),
    ],
  };
};
