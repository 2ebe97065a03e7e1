import type { EntityItem } from 'electrodb';
import { type Actor, type Claims, queryThenReadAsActor, readAsActor } from './auth/session-items.ts';
import { auditActor, audited, changed } from './audit.ts';
import { type Read, readTogether } from './db/batch-read.ts';
import { cursorAfter, queryPage } from './db/pages.ts';
import type { Db, Tx } from './db/service.ts';
import { commit, named, write } from './db/transactions.ts';
import { AppError, notFound } from './errors.ts';
import { newId } from './ids.ts';
import { Page, type PageRequest } from './pagination.ts';
import { canDeleteTeam, canUpdateTeam } from './rules.ts';
import type { TeamInput } from './schemas.ts';
import { isoMillis } from './time.ts';
import { type MembershipItem, type TeamItem, type TeamView, teamView } from './views.ts';

export interface TeamAccess {
  team: TeamItem;
  me: MembershipItem;
}

const NOT_MEMBER = 'No team with that slug, or you are not a member of it.';

/**
 * Step one of every team-scoped use case: the id of the team behind `slug`, read with the
 * caller's session in one strongly consistent BatchGetItem. Throws `unauthorized`, `not_found`.
 */
export const teamIdOf = async (db: Db, slug: string, claims: Claims): Promise<{ teamId: number; actor: Actor }> => {
  const {
    actor,
    items: [claim],
  } = await readAsActor(db, claims, [[db.entities.slugClaim, { slug }]] as const);
  if (!claim) throw notFound(NOT_MEMBER);
  return { teamId: claim.teamId, actor };
};

/**
 * Step two: the team and the actor's membership, read strongly consistent from the base table
 * (never a GSI) in one BatchGetItem, with `also` (the users a page names, say) in the same request.
 * Throws `not_found` both when the team does not exist and when the actor is not in it, so the
 * two cannot be told apart.
 */
export const memberOf = async <const T extends readonly Read[]>(
  db: Db,
  teamId: number,
  slug: string,
  actor: Actor,
  also: T,
): Promise<TeamAccess & { also: { -readonly [I in keyof T]: EntityItem<T[I][0]> | null } }> => {
  // Only the team and the membership must be read strongly consistent (they authorise the call).
  const [team, me, ...rest] = await readTogether(
    db,
    [[db.entities.team, { teamId }], [db.entities.membership, { teamId, userUuid: actor.userUuid }], ...also] as const,
    { relaxedFrom: 2 },
  );
  if (!team || !me || team.slug !== slug) throw notFound(NOT_MEMBER);
  return { team: team as TeamItem, me: me as MembershipItem, also: rest as { -readonly [I in keyof T]: EntityItem<T[I][0]> | null } };
};

/** Both steps: the team behind `slug` and the actor's membership, in two BatchGetItems. */
export const requireMember = async (db: Db, slug: string, claims: Claims): Promise<TeamAccess & { actor: Actor }> => {
  const { teamId, actor } = await teamIdOf(db, slug, claims);
  const { team, me } = await memberOf(db, teamId, slug, actor, []);
  return { team, me, actor };
};

/**
 * A page of a team's list read between the two steps, so that its rows' own items ride in step
 * two's BatchGetItem: three requests for the page, whatever its size. An error of the page's
 * Query (a cursor this list did not issue) comes second to `not_found`, as it would after step two.
 */
export const pageThenMember = async <I, const T extends readonly Read[]>(
  db: Db,
  slug: string,
  claims: Claims,
  query: (teamId: number) => Promise<Page<I>>,
  rowReads: (items: I[], actor: Actor, teamId: number) => T,
) => {
  const { teamId, actor } = await teamIdOf(db, slug, claims);
  const page = await query(teamId).catch((error: unknown) => ({ error }));
  const access = await memberOf(db, teamId, slug, actor, 'error' in page ? ([] as unknown as T) : rowReads(page.items, actor, teamId));
  if ('error' in page) throw page.error;
  return { ...access, page, actor };
};

/** The condition, inside a writing transaction, that the actor still holds the role it was read with. */
export const actorStillHolds = (tx: Tx, me: MembershipItem) =>
  tx.membership
    .check({ teamId: me.teamId, userUuid: me.userUuid })
    .where((a, op) => op.eq(a.role, me.role))
    .commit();

/**
 * Creates the team, its slug claim and the creator's OWNER membership in one transaction.
 * Throws `slug_taken`.
 */
export const createTeam = async (db: Db, claims: Claims, input: TeamInput, now: Date): Promise<TeamView> => {
  const {
    actor,
    items: [owner],
  } = await readAsActor(db, claims, (userUuid) => [[db.entities.user, { userUuid }]] as const);
  if (!owner) throw new AppError('unauthorized');
  const by = auditActor(actor, owner.userId);
  const stamp = isoMillis(now);
  let created: TeamItem | undefined;
  await commit(
    () => {
      const t: TeamItem = { teamId: newId(now), name: input.name, slug: input.slug, ownerCount: 1, createdAt: stamp, updatedAt: stamp };
      const memberId = newId(now);
      created = t;
      return write(db, (tx) => [
        named('slug', tx.slugClaim.create({ slug: t.slug, teamId: t.teamId }).commit()),
        named('team', tx.team.create(t).commit()),
        named('memberId', tx.idClaim.create({ kind: 'membership', id: memberId }).commit()),
        named(
          'membership',
          tx.membership
            .create({
              teamId: t.teamId,
              userUuid: owner.userUuid,
              memberId,
              userId: owner.userId,
              role: 'OWNER',
              createdAt: stamp,
              updatedAt: stamp,
            })
            .commit(),
        ),
        named(
          'audit',
          audited(
            tx,
            {
              teamId: t.teamId,
              action: 'team.created',
              actor: by,
              target: { type: 'team', id: t.teamId },
              changes: changed({}, { name: t.name, slug: t.slug }),
            },
            now,
          ),
        ),
      ]);
    },
    // The others only clash on a freshly drawn id, so draw again.
    { slug: () => new AppError('slug_taken'), otherwise: () => 'retry' },
  );
  return teamView(created as TeamItem);
};

/**
 * The teams the actor belongs to, in the order they joined: one Query, then one BatchGetItem for
 * the teams and the caller's session (nothing is answered before the session is checked).
 */
export const listMyTeams = async (db: Db, claims: Claims, request: PageRequest): Promise<Page<TeamView>> => {
  const { result: page, items: teams } = await queryThenReadAsActor(
    db,
    claims,
    (userUuid) =>
      queryPage(
        db,
        `teams ${userUuid}`,
        (options) => db.entities.membership.query.byUser({ userUuid }).go(options),
        request,
        cursorAfter(db.entities.membership, 'byUser'),
      ),
    (page) => page.items.map((m) => [db.entities.team, { teamId: m.teamId }] as const),
  );
  // A team deleted a moment ago may still have this membership until its cleanup ends: skip it.
  const views = teams.flatMap((t) => (t ? [teamView(t as TeamItem)] : []));
  return new Page(views, page.cursor);
};

export const getTeam = async (db: Db, claims: Claims, slug: string): Promise<TeamView> =>
  teamView((await requireMember(db, slug, claims)).team);

/**
 * Renames a team and/or moves it to a new slug. A slug change deletes the old claim and creates
 * the new one in the same transaction as the team, so no moment exists where both or neither
 * slug leads to it. Throws `forbidden`, `slug_taken`, `conflict`.
 */
export const updateTeam = async (db: Db, claims: Claims, slug: string, input: TeamInput, now: Date): Promise<TeamView> => {
  const { team: current, me, actor } = await requireMember(db, slug, claims);
  if (!canUpdateTeam(me.role)) throw new AppError('forbidden');
  const updatedAt = isoMillis(now);
  const moving = input.slug !== current.slug;
  const renamed = changed({ name: current.name, slug: current.slug }, { name: input.name, slug: input.slug });
  const conflict = () => new AppError('conflict');
  await commit(
    () =>
      write(db, (tx) => [
        named(
          'team',
          tx.team
            .patch({ teamId: current.teamId })
            .set({ name: input.name, slug: input.slug, updatedAt })
            .where((a, op) => op.eq(a.slug, current.slug))
            .commit(),
        ),
        named('actorRole', actorStillHolds(tx, me)),
        named('newSlug', ...(moving ? [tx.slugClaim.create({ slug: input.slug, teamId: current.teamId }).commit()] : [])),
        named(
          'oldSlug',
          ...(moving
            ? [
                tx.slugClaim
                  .delete({ slug: current.slug })
                  .where((a, op) => op.eq(a.teamId, current.teamId))
                  .commit(),
              ]
            : []),
        ),
        // A rename to the same name and slug changes nothing worth an entry.
        named(
          'audit',
          ...(Object.keys(renamed).length === 0
            ? []
            : [
                audited(
                  tx,
                  {
                    teamId: current.teamId,
                    action: 'team.updated',
                    actor: auditActor(actor, me.userId),
                    target: { type: 'team', id: current.teamId },
                    changes: renamed,
                  },
                  now,
                ),
              ]),
        ),
      ]),
    { team: conflict, actorRole: conflict, newSlug: () => new AppError('slug_taken'), oldSlug: conflict, audit: conflict },
  );
  return teamView({ ...current, name: input.name, slug: input.slug, updatedAt });
};

/**
 * Deletes the team and frees its slug (OWNER only), and writes its cleanup job, in one
 * transaction; answers at once. The team's memberships, pending-invite claims and invites are
 * removed afterwards by functions/team-cleanup.ts (lib/team-cleanup.ts), which the job's stream
 * record starts. Reads never show what the cleanup has not reached yet: they all start from the
 * team item. Throws `forbidden`, `conflict`.
 */
export const deleteTeam = async (db: Db, claims: Claims, slug: string, now: Date): Promise<Record<string, never>> => {
  const { team: current, me, actor } = await requireMember(db, slug, claims);
  if (!canDeleteTeam(me.role)) throw new AppError('forbidden');
  await commit(
    () =>
      write(db, (tx) => [
        named(
          'team',
          tx.team
            .delete({ teamId: current.teamId })
            .where((a, op) => op.eq(a.slug, current.slug))
            .commit(),
        ),
        named(
          'slug',
          tx.slugClaim
            .delete({ slug: current.slug })
            .where((a, op) => op.eq(a.teamId, current.teamId))
            .commit(),
        ),
        named('actorRole', actorStillHolds(tx, me)),
        named('cleanup', tx.teamCleanup.create({ teamId: current.teamId, slug: current.slug, deletedAt: isoMillis(now) }).commit()),
        named(
          'audit',
          audited(
            tx,
            {
              teamId: current.teamId,
              action: 'team.deleted',
              actor: auditActor(actor, me.userId),
              target: { type: 'team', id: current.teamId },
              changes: { name: { before: current.name }, slug: { before: current.slug } },
            },
            now,
          ),
        ),
      ]),
    { otherwise: () => new AppError('conflict') },
  );
  return {};
};
