import { type Claims, readAsActor } from '#lib/auth/session-items.ts';
import { actorStillHolds, pageThenMember, requireAssurance, requireMember, teamIdOf } from '#lib/auth/team-access.ts';
import { canReadDomains } from '#lib/auth/team-rules.ts';
import { AppError, notFound } from '#lib/core/errors.ts';
import { newId } from '#lib/core/ids.ts';
import { Page, type PageRequest } from '#lib/core/pagination.ts';
import { isoMillis } from '#lib/core/time.ts';
import { readTogether } from '#lib/db/batch-read.ts';
import type { JoinRequestItem, TeamDomainItem, UserItem } from '#lib/db/items.ts';
import { cursorAfter, queryPage } from '#lib/db/pages.ts';
import type { Db, Tx } from '#lib/db/service.ts';
import { commit, named, write } from '#lib/db/transactions.ts';
import { auditActor, audited } from '#lib/events/audit.ts';
import type { JoinRequestView, JoinableTeam } from '#lib/wire/domains.ts';

/**
 * Joining a team through its verified domain (docs/domains.md, "Joining"): a signed-in person
 * whose **confirmed** address is at a domain a team verified may join it as MEMBER (`join:
 * member`) or ask to (`join: request`, answered by an owner or admin). Every join is one
 * transaction, conditional on what made it possible: the domain still verified for the team with
 * that setting, the address still the person's and confirmed, no membership yet.
 */

const NOT_JOINABLE = 'No team with that slug that you may join through your address.';

/** The part of an address after its last `@` (addresses are kept lower-cased). */
export const domainOfAddress = (email: string): string => email.slice(email.lastIndexOf('@') + 1);

const userTarget = (u: Pick<UserItem, 'userId' | 'email'>) => ({ type: 'user', id: u.userId, email: u.email }) as const;

/** The condition that the account still holds `email`, confirmed. */
const addressStillConfirmed = (tx: Tx, u: Pick<UserItem, 'userUuid' | 'email'>) =>
  named(
    'account',
    tx.user
      .check({ userUuid: u.userUuid })
      .where((a, op) => `${op.eq(a.email, u.email)} AND ${op.exists(a.emailConfirmedAt)}`)
      .commit(),
  );

/** A MEMBER's membership and its id claim (a clash of the fresh id: try again). */
const newMember = (tx: Tx, m: { teamId: number; userUuid: string; userId: number; memberId: number; stamp: string }) => [
  named(
    'membership',
    tx.membership
      .create({
        teamId: m.teamId,
        userUuid: m.userUuid,
        memberId: m.memberId,
        userId: m.userId,
        role: 'MEMBER',
        createdAt: m.stamp,
        updatedAt: m.stamp,
      })
      .commit(),
  ),
  named('memberId', tx.idClaim.create({ kind: 'membership', id: m.memberId }).commit()),
];

/** The conditions of a join: the domain verified for the team with this setting, the address the person's and confirmed. */
const stillJoinable = (tx: Tx, record: TeamDomainItem, u: UserItem) => [
  named(
    'owner',
    tx.domainOwner
      .check({ domain: record.domain })
      .where((a, op) => op.eq(a.teamId, record.teamId))
      .commit(),
  ),
  named(
    'domain',
    tx.teamDomain
      .check({ teamId: record.teamId, domain: record.domain })
      .where((a, op) => `${op.eq(a.status, 'VERIFIED')} AND ${op.eq(a.join, record.join)}`)
      .commit(),
  ),
  addressStillConfirmed(tx, u),
];

/** The teams the caller may join through their confirmed address's domain: none, or the one that verified it. */
export const joinableTeams = async (db: Db, claims: Claims): Promise<JoinableTeam[]> => {
  const {
    items: [u],
  } = await readAsActor(db, claims, (userUuid) => [[db.entities.user, { userUuid }]] as const);
  if (!u) throw new AppError('unauthorized');
  if (u.emailConfirmedAt === undefined) return [];
  const domain = domainOfAddress(u.email);
  const owner = (await db.entities.domainOwner.get({ domain }).go({ consistent: true })).data;
  if (!owner) return [];
  const { teamId } = owner;
  const [team, record, membership, request] = await readTogether(db, [
    [db.entities.team, { teamId }],
    [db.entities.teamDomain, { teamId, domain }],
    [db.entities.membership, { teamId, userUuid: u.userUuid }],
    [db.entities.joinRequest, { teamId, userId: u.userId }],
  ] as const);
  if (!team || !record || record.status !== 'VERIFIED' || record.join === 'off' || membership) return [];
  return [{ team: { id: team.teamId, name: team.name, slug: team.slug }, domain, join: record.join, requested: request !== null }];
};

/**
 * Joins (or asks to join) the team behind `slug` through the caller's confirmed address. A team
 * the caller may not join this way is 404, as one that does not exist. Throws `not_found`,
 * `email_not_verified`, `already_member`, `mfa_required` (a team that requires MFA, from aal1), `conflict`.
 */
export const joinTeam = async (db: Db, claims: Claims, slug: string, now: Date): Promise<{ status: 'MEMBER' | 'REQUESTED' }> => {
  const { teamId, actor } = await teamIdOf(db, slug, claims);
  const [team, u, membership] = await readTogether(db, [
    [db.entities.team, { teamId }],
    [db.entities.user, { userUuid: actor.userUuid }],
    [db.entities.membership, { teamId, userUuid: actor.userUuid }],
  ] as const);
  if (!team || team.slug !== slug || !u) throw notFound(NOT_JOINABLE);
  if (membership) {
    // A member meets the team's policy first, as on every route of the team; a stranger learns nothing of it.
    requireAssurance(team, actor);
    throw new AppError('already_member', 'You are a member of this team already.');
  }
  if (u.emailConfirmedAt === undefined) throw new AppError('email_not_verified');
  const domain = domainOfAddress(u.email);
  const [record, owner, request] = await readTogether(db, [
    [db.entities.teamDomain, { teamId, domain }],
    [db.entities.domainOwner, { domain }],
    [db.entities.joinRequest, { teamId, userId: u.userId }],
  ] as const);
  if (!record || record.status !== 'VERIFIED' || record.join === 'off' || owner?.teamId !== teamId) throw notFound(NOT_JOINABLE);
  requireAssurance(team, actor);
  const by = auditActor(actor, u.userId);
  const stamp = isoMillis(now);
  if (record.join === 'request') {
    if (request) return { status: 'REQUESTED' };
    await commit(
      () =>
        write(db, (tx) => [
          named(
            'request',
            tx.joinRequest.create({ teamId, userId: u.userId, userUuid: u.userUuid, email: u.email, domain, createdAt: stamp }).commit(),
          ),
          named(
            'membership',
            tx.membership
              .check({ teamId, userUuid: u.userUuid })
              .where((a, op) => op.notExists(a.role))
              .commit(),
          ),
          ...stillJoinable(tx, record, u),
          named(
            'audit',
            audited(
              tx,
              { teamId, action: 'join.requested', actor: by, target: userTarget(u), changes: { domain: { after: domain } } },
              now,
            ),
          ),
        ]),
      {
        // Asked already (another tab): the request stands.
        request: () => 'done',
        membership: () => new AppError('already_member', 'You are a member of this team already.'),
        otherwise: () => notFound(NOT_JOINABLE),
      },
    );
    return { status: 'REQUESTED' };
  }
  await commit(
    () => {
      const memberId = newId(now);
      return write(db, (tx) => [
        ...newMember(tx, { teamId, userUuid: u.userUuid, userId: u.userId, memberId, stamp }),
        // A request left from when the domain asked for one is answered by the join.
        named('request', ...(request ? [tx.joinRequest.delete({ teamId, userId: u.userId }).commit()] : [])),
        ...stillJoinable(tx, record, u),
        named(
          'audit',
          audited(
            tx,
            {
              teamId,
              action: 'member.joined',
              actor: by,
              target: { type: 'member', id: memberId, userId: u.userId },
              changes: { role: { after: 'MEMBER' }, domain: { after: domain } },
            },
            now,
          ),
        ),
      ]);
    },
    {
      membership: () => new AppError('already_member', 'You are a member of this team already.'),
      memberId: () => 'retry',
      otherwise: () => notFound(NOT_JOINABLE),
    },
  );
  return { status: 'MEMBER' };
};

const requestView = (r: JoinRequestItem): JoinRequestView => ({
  userId: r.userId,
  email: r.email,
  domain: r.domain,
  createdAt: r.createdAt,
});

/** The team's requests to join, oldest user id first, a page at a time (owners and admins). */
export const listJoinRequests = async (db: Db, claims: Claims, slug: string, request: PageRequest): Promise<Page<JoinRequestView>> => {
  const entity = db.entities.joinRequest;
  const { page, me } = await pageThenMember(
    db,
    slug,
    claims,
    (teamId) =>
      queryPage(
        db,
        `join requests ${teamId}`,
        (options) => entity.query.primary({ teamId }).go(options),
        request,
        cursorAfter(entity, 'primary'),
      ),
    () => [] as const,
  );
  if (!canReadDomains(me.role)) throw new AppError('forbidden');
  return new Page(page.items.map(requestView), page.cursor);
};

const NO_REQUEST = 'No request to join from that user.';

/**
 * Answers a request: accepted, the requester becomes a MEMBER (while the address is still theirs
 * and confirmed; the domain may have lapsed since: an owner or admin decides with their eyes open);
 * declined, the request goes. Throws `forbidden`, `not_found`, `already_member`, `conflict`.
 */
export const answerJoinRequest = async (
  db: Db,
  claims: Claims,
  slug: string,
  userId: number,
  accept: boolean,
  now: Date,
): Promise<Record<string, never>> => {
  const { team, me, actor } = await requireMember(db, slug, claims);
  if (!canReadDomains(me.role)) throw new AppError('forbidden');
  const request = (await db.entities.joinRequest.get({ teamId: team.teamId, userId }).go({ consistent: true })).data;
  if (!request) throw notFound(NO_REQUEST);
  const by = auditActor(actor, me.userId);
  const stamp = isoMillis(now);
  let memberId = 0;
  let alreadyMember = false;
  try {
    await commit(
      () => {
        memberId = newId(now);
        return write(db, (tx) => [
          named(
            'request',
            tx.joinRequest
              .delete({ teamId: team.teamId, userId })
              .where((a, op) => op.exists(a.userUuid))
              .commit(),
          ),
          named('actorRole', actorStillHolds(tx, me)),
          ...(accept
            ? [
                ...newMember(tx, { teamId: team.teamId, userUuid: request.userUuid, userId, memberId, stamp }),
                addressStillConfirmed(tx, request),
              ]
            : []),
          named(
            'audit',
            audited(
              tx,
              accept
                ? {
                    teamId: team.teamId,
                    action: 'member.joined',
                    actor: by,
                    target: { type: 'member', id: memberId, userId },
                    changes: { role: { after: 'MEMBER' }, domain: { after: request.domain } },
                  }
                : {
                    teamId: team.teamId,
                    action: 'join.declined',
                    actor: by,
                    target: userTarget(request),
                    changes: { domain: { before: request.domain } },
                  },
              now,
            ),
          ),
        ]);
      },
      {
        request: () => notFound(NO_REQUEST),
        membership: () => {
          alreadyMember = true;
          return new AppError('already_member', 'The requester is a member already: the request is gone.');
        },
        memberId: () => 'retry',
        // The requester's address changed or went: the request no longer names them.
        account: () => notFound(NO_REQUEST),
        actorRole: () => new AppError('conflict'),
        audit: () => new AppError('conflict'),
      },
    );
  } catch (error) {
    // A member already (an invitation meanwhile): the request has nothing left to answer.
    if (alreadyMember) await db.entities.joinRequest.delete({ teamId: team.teamId, userId }).go();
    throw error;
  }
  return {};
};
