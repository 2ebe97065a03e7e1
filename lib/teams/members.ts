import type { Claims } from '#lib/auth/session-items.ts';
import { actorStillHolds, pageThenMember, requireMember } from '#lib/auth/team-access.ts';
import { canChangeRole, canRemoveMember } from '#lib/auth/team-rules.ts';
import { AppError, notFound } from '#lib/core/errors.ts';
import { Page, type PageRequest } from '#lib/core/pagination.ts';
import { isoMillis } from '#lib/core/time.ts';
import type { Role } from '#lib/db/entities/roles.ts';
import type { MembershipItem } from '#lib/db/items.ts';
import { cursorAfter, queryPage } from '#lib/db/pages.ts';
import type { Db, Tx } from '#lib/db/service.ts';
import { commit, named, write } from '#lib/db/transactions.ts';
import { auditActor, audited } from '#lib/events/audit.ts';
import { type MemberView, memberView, membershipView } from '#lib/wire/views.ts';

/**
 * A team's members in the order they joined: the slug with the session, the page (one Query of
 * gsi2), then the team, the caller's membership and the page's users in one BatchGetItem.
 */
export const listMembers = async (db: Db, claims: Claims, slug: string, request: PageRequest): Promise<Page<MemberView>> => {
  const { page, also: users } = await pageThenMember(
    db,
    slug,
    claims,
    (teamId) =>
      queryPage(
        db,
        `members ${teamId}`,
        (options) => db.entities.membership.query.byTeam({ teamId }).go(options),
        request,
        cursorAfter(db.entities.membership, 'byTeam'),
      ),
    (items) => items.map((m) => [db.entities.user, { userUuid: m.userUuid }] as const),
  );
  return new Page(
    page.items.flatMap((m, i) => {
      const u = users[i];
      return u ? [memberView(m, u)] : [];
    }),
    page.cursor,
  );
};

/**
 * The membership `memberId` names inside this team. Found through gsi2, which may lag a write by
 * a moment; every write that follows re-checks the item it found with a condition.
 */
const findMember = async (db: Db, teamId: number, memberId: number): Promise<MembershipItem> => {
  const { data } = await db.entities.membership.query.byTeam({ teamId, memberId }).go({ limit: 1 });
  const found = data[0];
  if (!found) throw notFound('No member with that id in this team.');
  return found;
};

/** The owner-count change that goes with moving one membership from `from` to `to` (or removing it). */
const ownerDelta = (from: Role, to: Role | null): number => (to === 'OWNER' ? 1 : 0) - (from === 'OWNER' ? 1 : 0);

/**
 * The owner-count update on the team item, only when an OWNER is involved: other joins, leaves and
 * role changes do not write the team item, so a busy team has no hot key. Demoting or removing an
 * OWNER carries `ownerCount > 1`: the rule "a team keeps an owner" is this condition, checked in
 * the same transaction as the change itself.
 */
const ownerCounter = (tx: Tx, teamId: number, owners: number) =>
  owners === 0
    ? []
    : [
        tx.team
          .patch({ teamId })
          .add({ ownerCount: owners })
          .where((a, op) => (owners < 0 ? op.gt(a.ownerCount, 1) : ''))
          .commit(),
      ];

/**
 * The answers of a role change or removal: the membership or the actor's role changed since the
 * read (409), or a demoted or removed OWNER was the last one. In this order when several fail.
 */
const guardsFailed = (owners: number) => {
  const conflict = () => new AppError('conflict');
  return {
    membership: conflict,
    actorRole: conflict,
    ownerCount: () => (owners < 0 ? new AppError('last_owner') : conflict()),
    audit: conflict,
  };
};

/** A membership as the audit log names it: its member id and its user's public id. */
export const memberTarget = (m: MembershipItem) => ({ type: 'member', id: m.memberId, userId: m.userId }) as const;

/** The membership still exactly as it was read: same id (not re-created) and same role. */
const unchanged = (target: MembershipItem) => (a: { role: unknown; memberId: unknown }, op: { eq: (a: unknown, v: unknown) => string }) =>
  `${op.eq(a.role, target.role)} AND ${op.eq(a.memberId, target.memberId)}`;

/**
 * Changes a member's role. The membership is updated only if it still has the role read, the
 * actor still holds its role, and when an OWNER is demoted the team has another owner, all in
 * one transaction. Throws `forbidden`, `not_found`, `last_owner`, `conflict`.
 */
export const updateMemberRole = async (db: Db, claims: Claims, slug: string, memberId: number, role: Role, now: Date) => {
  const { team: t, me, actor } = await requireMember(db, slug, claims);
  const target = await findMember(db, t.teamId, memberId);
  if (!canChangeRole(me.role, target.role, role)) throw new AppError('forbidden');
  if (target.role === role) return membershipView(target);

  const updatedAt = isoMillis(now);
  const owners = ownerDelta(target.role, role);
  const isSelf = target.userUuid === me.userUuid;
  await commit(
    () =>
      write(db, (tx) => [
        named(
          'membership',
          tx.membership.patch({ teamId: t.teamId, userUuid: target.userUuid }).set({ role, updatedAt }).where(unchanged(target)).commit(),
        ),
        named('actorRole', ...(isSelf ? [] : [actorStillHolds(tx, me)])),
        named('ownerCount', ...ownerCounter(tx, t.teamId, owners)),
        named(
          'audit',
          audited(
            tx,
            {
              teamId: t.teamId,
              action: 'member.role_changed',
              actor: auditActor(actor, me.userId),
              target: memberTarget(target),
              changes: { role: { before: target.role, after: role } },
            },
            now,
          ),
        ),
      ]),
    guardsFailed(owners),
  );
  return membershipView({ ...target, role, updatedAt });
};

/**
 * Removes a member (or lets a member leave). Same guards as a role change: the membership as
 * read, the actor's role, and never the last OWNER. Throws `forbidden`, `not_found`,
 * `last_owner`, `conflict`.
 */
export const removeMember = async (db: Db, claims: Claims, slug: string, memberId: number, now: Date): Promise<Record<string, never>> => {
  const { team: t, me, actor } = await requireMember(db, slug, claims);
  const target = await findMember(db, t.teamId, memberId);
  const isSelf = target.userUuid === me.userUuid;
  if (!canRemoveMember(me.role, target.role, isSelf)) throw new AppError('forbidden');

  const owners = ownerDelta(target.role, null);
  await commit(
    () =>
      write(db, (tx) => [
        named('membership', tx.membership.delete({ teamId: t.teamId, userUuid: target.userUuid }).where(unchanged(target)).commit()),
        named('actorRole', ...(isSelf ? [] : [actorStillHolds(tx, me)])),
        named('ownerCount', ...ownerCounter(tx, t.teamId, owners)),
        named(
          'audit',
          audited(
            tx,
            {
              teamId: t.teamId,
              action: isSelf ? 'member.left' : 'member.removed',
              actor: auditActor(actor, me.userId),
              target: memberTarget(target),
              changes: { role: { before: target.role } },
            },
            now,
          ),
        ),
      ]),
    guardsFailed(owners),
  );
  return {};
};
