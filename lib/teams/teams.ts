import { type Claims, queryThenReadAsActor, readAsActor, requireAal2 } from '#lib/auth/session-items.ts';
import { actorStillHolds, requireMember } from '#lib/auth/team-access.ts';
import { canDeleteTeam, canSetTeamPolicy, canUpdateTeam } from '#lib/auth/team-rules.ts';
import { AppError } from '#lib/core/errors.ts';
import { newId } from '#lib/core/ids.ts';
import { Page, type PageRequest } from '#lib/core/pagination.ts';
import { isoMillis } from '#lib/core/time.ts';
import { cleanupDueAt } from '#lib/teams/cleanup.ts';
import type { TeamItem } from '#lib/db/items.ts';
import { cursorAfter, queryPage } from '#lib/db/pages.ts';
import type { Db, Tx } from '#lib/db/service.ts';
import { commit, named, write } from '#lib/db/transactions.ts';
import { auditActor, audited, changed } from '#lib/events/audit.ts';
import type { TeamInput, TeamUpdateInput } from '#lib/wire/schemas.ts';
import { type TeamView, teamView } from '#lib/wire/views.ts';

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
 * Renames a team and/or moves it to a new slug, and sets whether it requires MFA. A slug change
 * deletes the old claim and creates the new one in the same transaction as the team, so no moment
 * exists where both or neither slug leads to it. `requireMfa` changes only by an OWNER from an
 * aal2 session (so no owner can lock themselves out), conditional on the value read; each change is
 * a `team.mfa_policy_changed` entry. Throws `forbidden`, `mfa_required`, `slug_taken`, `conflict`.
 */
export const updateTeam = async (db: Db, claims: Claims, slug: string, input: TeamUpdateInput, now: Date): Promise<TeamView> => {
  const { team: current, me, actor } = await requireMember(db, slug, claims);
  if (!canUpdateTeam(me.role)) throw new AppError('forbidden');
  const requireMfa = input.requireMfa ?? current.requireMfa === true;
  const policyChanged = requireMfa !== (current.requireMfa === true);
  if (policyChanged && !canSetTeamPolicy(me.role))
    throw new AppError('forbidden', 'Only an owner may change whether the team requires MFA.');
  if (policyChanged) requireAal2(actor);
  const updatedAt = isoMillis(now);
  const moving = input.slug !== current.slug;
  const renamed = changed({ name: current.name, slug: current.slug }, { name: input.name, slug: input.slug });
  const conflict = () => new AppError('conflict');
  const entry = (action: 'team.updated' | 'team.mfa_policy_changed', changes: ReturnType<typeof changed>) => (tx: Tx) =>
    audited(
      tx,
      { teamId: current.teamId, action, actor: auditActor(actor, me.userId), target: { type: 'team', id: current.teamId }, changes },
      now,
    );
  await commit(
    () =>
      write(db, (tx) => [
        named(
          'team',
          tx.team
            .patch({ teamId: current.teamId })
            .set({ name: input.name, slug: input.slug, updatedAt, ...(policyChanged ? { requireMfa } : {}) })
            .where((a, op) =>
              policyChanged
                ? `${op.eq(a.slug, current.slug)} AND ${current.requireMfa === undefined ? op.notExists(a.requireMfa) : op.eq(a.requireMfa, current.requireMfa)}`
                : op.eq(a.slug, current.slug),
            )
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
        named('audit', ...(Object.keys(renamed).length === 0 ? [] : [entry('team.updated', renamed)(tx)])),
        named(
          'policyAudit',
          ...(policyChanged ? [entry('team.mfa_policy_changed', { requireMfa: { before: !requireMfa, after: requireMfa } })(tx)] : []),
        ),
      ]),
    {
      team: conflict,
      actorRole: conflict,
      newSlug: () => new AppError('slug_taken'),
      oldSlug: conflict,
      audit: conflict,
      policyAudit: conflict,
    },
  );
  return teamView({ ...current, name: input.name, slug: input.slug, updatedAt, requireMfa });
};

/**
 * Deletes the team and frees its slug (OWNER only), and writes its cleanup job, in one
 * transaction; answers at once. The team's memberships, pending-invite claims and invites are
 * removed afterwards by functions/team-cleanup.ts (lib/teams/cleanup.ts), which the job's stream
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
        named(
          'cleanup',
          tx.teamCleanup
            .create({ teamId: current.teamId, slug: current.slug, deletedAt: isoMillis(now), dueAt: cleanupDueAt(now) })
            .commit(),
        ),
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
