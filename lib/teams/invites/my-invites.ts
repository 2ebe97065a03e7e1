/** The invitee's side: the invites addressed to the caller's account, read, accepted or declined. */
import { type Actor, type Claims, readAsActor } from '#lib/auth/session-items.ts';
import { requireAssurance } from '#lib/auth/team-access.ts';
import { config } from '#lib/core/config.ts';
import { AppError, notFound } from '#lib/core/errors.ts';
import { newId } from '#lib/core/ids.ts';
import { EVENT_METRICS } from '#lib/core/metric-names.ts';
import { recordEvent } from '#lib/core/metrics.ts';
import { Page, type PageRequest } from '#lib/core/pagination.ts';
import { isoMillis } from '#lib/core/time.ts';
import { readTogether } from '#lib/db/batch-read.ts';
import type { InviteItem, TeamItem, UserItem } from '#lib/db/items.ts';
import { hydrate } from '#lib/db/lookups.ts';
import { cursorAfter, queryPage } from '#lib/db/pages.ts';
import type { Db } from '#lib/db/service.ts';
import { commit, named, write } from '#lib/db/transactions.ts';
import { auditActor, audited } from '#lib/events/audit.ts';
import { type InviteView, inviteView } from '#lib/wire/views.ts';
import { accountOf, ownItem, requireConfirmed } from './access.ts';
import { endInvite, inviteTarget, isExpired, isOpen, mailFor } from './lifecycle.ts';

/**
 * Pending, unexpired invites addressed to the account's e-mail, across teams: one BatchGetItem for
 * the caller's session and user item (the address is the account's, not the access token's
 * `email` claim, which names the old one for a while after an e-mail change), one Query, then one
 * BatchGetItem for their teams and inviters (none for an empty page). Throws `email_not_verified`.
 */
export const listMyInvites = async (db: Db, claims: Claims, request: PageRequest, now: Date): Promise<Page<InviteView>> => {
  const {
    actor,
    items: [user],
  } = await readAsActor(db, claims, (userUuid) => [ownItem(db, userUuid)] as const);
  const { email } = requireConfirmed(user);
  const page = await queryPage(
    db,
    `my-invites ${actor.userUuid}`,
    (options) =>
      db.entities.invite.query
        .byEmail({ email, status: 'PENDING' })
        .where((a, op) => op.gt(a.expiresAt, isoMillis(now)))
        .go(options),
    request,
    cursorAfter(db.entities.invite, 'byEmail'),
  );
  const { teams: teamById, users: inviters } = await hydrate(db, {
    teamIds: page.items.map((i) => i.teamId),
    userUuids: page.items.map((i) => i.invitedByUuid),
  });
  return new Page(
    page.items.flatMap((i) => {
      const t = teamById.get(i.teamId);
      return t ? [inviteView(i, t, inviters.get(i.invitedByUuid))] : [];
    }),
    page.cursor,
  );
};

const TEAM_GONE = 'The team of this invite no longer exists.';

/**
 * The invite behind `uuid` for its addressee only, in this order: the account exists (401), the
 * invite exists (404), is addressed to the account's e-mail (403; the user item's, never the access
 * token's claim, which may name an address the account gave up), and that address is confirmed
 * (403 `email_not_verified`). The rest of the checks need its team (`stillOpen`).
 */
const addressedTo = (found: InviteItem | null, user: UserItem | null): InviteItem => {
  const account = accountOf(user);
  if (!found) throw notFound('No invite with that id.');
  if (found.email !== account.email) throw new AppError('invite_email_mismatch');
  requireConfirmed(account);
  return found;
};

/**
 * The rest of the addressee's checks, in this order: its team exists (404), it is still pending
 * (409), not expired (410; EXPIRED, once swept, is pending and expired). A deleted team's invites are deleted by a background cleanup; checking
 * the team before the invite's own state makes the answer 404 whether that has run yet or not.
 * Only the addressee gets this far, so nobody else learns whether the team exists.
 */
const stillOpen = (i: InviteItem, team: TeamItem | null, now: Date): TeamItem => {
  if (!team) throw notFound(TEAM_GONE);
  if (!isOpen(i)) throw new AppError('invite_not_pending');
  if (isExpired(i, now)) throw new AppError('invite_expired');
  return team;
};

/** The invite's team, strongly consistent (its key is in the invite, so it cannot ride in the invite's read). */
const teamOf = async (db: Db, i: InviteItem): Promise<TeamItem | null> =>
  (await db.entities.team.get({ teamId: i.teamId }).go({ consistent: true })).data;

/**
 * The invite, its team and the actor's user item again, in one read, after a write found something
 * changed (the session was checked with the first read): all of `addressedTo`'s and `stillOpen`'s
 * checks once more.
 */
const readInviteAgain = async (db: Db, actor: Actor, i: InviteItem, now: Date): Promise<{ invite: InviteItem; user: UserItem }> => {
  const [found, team, user] = await readTogether(db, [
    [db.entities.invite, { inviteUuid: i.inviteUuid }],
    [db.entities.team, { teamId: i.teamId }],
    ownItem(db, actor.userUuid),
  ] as const);
  const invite = addressedTo(found, user);
  stillOpen(invite, team, now);
  return { invite, user: accountOf(user) };
};

/**
 * What the invitee sees before answering: the invite, the user item and the session in one
 * BatchGetItem, its team and inviter in a second. Throws the codes of `addressedTo` and `stillOpen`.
 */
export const getMyInvite = async (db: Db, claims: Claims, inviteUuid: string, now: Date): Promise<InviteView> => {
  const {
    items: [found, user],
  } = await readAsActor(db, claims, (userUuid) => [[db.entities.invite, { inviteUuid }], ownItem(db, userUuid)] as const);
  const i = addressedTo(found, user);
  const { teams, users } = await hydrate(db, { teamIds: [i.teamId], userUuids: [i.invitedByUuid] });
  const team = stillOpen(i, teams.get(i.teamId) ?? null, now);
  return inviteView(i, team, users.get(i.invitedByUuid));
};

/**
 * Accepts: in one transaction the invite moves from PENDING (unexpired, unchanged since read) to
 * ACCEPTED, its claim goes, the membership is created (its key refuses a second one) with its id
 * claim, the accepting user must still exist with the invite's address (a deleted account leaves
 * no membership behind, nor does an e-mail change confirmed since the read), and, for an OWNER only, the team's `ownerCount` moves (the team must still exist). Other
 * roles do not write the team item, so a team's joins share no hot item. Their guard against a
 * team deleted after the read is the claim's condition: the claim lives in the team's partition,
 * which the deletion's cleanup empties (claims and memberships alike) before it ends, so an accept
 * either commits before its claim goes, and its membership is collected, or fails. Throws the
 * codes of `addressedTo` and `stillOpen`, `already_member`.
 */
export const acceptInvite = async (db: Db, claims: Claims, inviteUuid: string, now: Date): Promise<Record<string, never>> => {
  const {
    actor,
    items: [found, user],
  } = await readAsActor(db, claims, (userUuid) => [[db.entities.invite, { inviteUuid }], ownItem(db, userUuid)] as const);
  let i = addressedTo(found, user);
  let invitee = accountOf(user);
  // A team that requires MFA takes only members who proved a second factor in this session.
  requireAssurance(stillOpen(i, await teamOf(db, i), now), actor);
  const stamp = isoMillis(now);
  let readAgain = false;
  const again = () => {
    readAgain = true;
    return 'retry' as const;
  };
  await commit(
    async () => {
      // After a failed condition on the invite, its claim or the user: it ended (409/410 from
      // here), its team is gone (404), it was re-sent (retry), the account is gone (401) or has
      // another address now (403).
      if (readAgain) ({ invite: i, user: invitee } = await readInviteAgain(db, actor, i, now));
      const memberId = newId(now);
      return write(db, (tx) => [
        ...endInvite(tx, i, 'ACCEPTED', now, true),
        named(
          'membership',
          tx.membership
            .create({
              teamId: i.teamId,
              userUuid: invitee.userUuid,
              memberId,
              userId: invitee.userId,
              role: i.role,
              createdAt: stamp,
              updatedAt: stamp,
            })
            .commit(),
        ),
        named('memberId', tx.idClaim.create({ kind: 'membership', id: memberId }).commit()),
        named(
          'account',
          tx.user
            .check({ userUuid: invitee.userUuid })
            .where((a, op) => op.eq(a.email, i.email))
            .commit(),
        ),
        named('ownerCount', ...(i.role === 'OWNER' ? [tx.team.patch({ teamId: i.teamId }).add({ ownerCount: 1 }).commit()] : [])),
        named(
          'audit',
          audited(
            tx,
            {
              teamId: i.teamId,
              action: 'invite.accepted',
              actor: auditActor(actor, invitee.userId),
              target: inviteTarget(i),
              changes: { status: { before: 'PENDING', after: 'ACCEPTED' }, memberId: { after: memberId }, role: { after: i.role } },
            },
            now,
          ),
        ),
      ]);
    },
    {
      invite: again,
      pending: again,
      membership: () => new AppError('already_member'),
      // A fresh member id clashed: draw another.
      memberId: () => 'retry',
      account: again,
      ownerCount: () => notFound(TEAM_GONE),
      audit: () => new AppError('conflict'),
    },
  );
  recordEvent(EVENT_METRICS.invitesAccepted);
  return {};
};

/** Declines: the invite moves from PENDING to DECLINED. Throws the codes of `addressedTo` and `stillOpen`. */
export const declineInvite = async (db: Db, claims: Claims, inviteUuid: string, now: Date): Promise<Record<string, never>> => {
  const {
    actor,
    items: [found, user],
  } = await readAsActor(db, claims, (userUuid) => [[db.entities.invite, { inviteUuid }], ownItem(db, userUuid)] as const);
  let i = addressedTo(found, user);
  const by = auditActor(actor, accountOf(user).userId);
  stillOpen(i, await teamOf(db, i), now);
  let readAgain = false;
  await commit(
    async () => {
      if (readAgain) ({ invite: i } = await readInviteAgain(db, actor, i, now));
      return write(db, (tx) => [
        ...endInvite(tx, i, 'DECLINED', now),
        named('mail', ...(config.declineNotice ? [mailFor(tx, 'declined', i.inviteUuid, now)] : [])),
        named(
          'audit',
          audited(
            tx,
            {
              teamId: i.teamId,
              action: 'invite.declined',
              actor: by,
              target: inviteTarget(i),
              changes: { status: { before: 'PENDING', after: 'DECLINED' } },
            },
            now,
          ),
        ),
      ]);
    },
    {
      otherwise: () => {
        readAgain = true;
        return 'retry';
      },
    },
  );
  recordEvent(EVENT_METRICS.invitesDeclined);
  return {};
};
