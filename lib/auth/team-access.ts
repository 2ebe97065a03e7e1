/**
 * The team access gate: every team-scoped use case starts here. Who is a member of which team is
 * read from the base table, strongly consistent; what each role may then do is ./team-rules.ts.
 */
import type { EntityItem } from 'electrodb';
import { notFound } from '#lib/core/errors.ts';
import type { Page } from '#lib/core/pagination.ts';
import { type Read, readTogether } from '#lib/db/batch-read.ts';
import type { MembershipItem, TeamItem } from '#lib/db/items.ts';
import type { Db, Tx } from '#lib/db/service.ts';
import { type Actor, type Claims, readAsActor, requireAal2 } from './session-items.ts';

/** The team and the caller's membership in it. */
export interface TeamAccess {
  team: TeamItem;
  me: MembershipItem;
}

const NOT_MEMBER = 'No team with that slug, or you are not a member of it.';

/**
 * A team that requires MFA (`requireMfa`) answers a member's aal1 session 403 `mfa_required`:
 * decided from the team and the session already read, so it costs no request.
 */
export const requireAssurance = (team: Pick<TeamItem, 'requireMfa'>, actor: Actor): void => {
  if (team.requireMfa === true) requireAal2(actor);
};

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
  requireAssurance(team as TeamItem, actor);
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
