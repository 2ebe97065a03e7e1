/** A team's side of its invites: list, read, resend and revoke (OWNER and ADMIN). */
import type { Claims } from '#lib/auth/session-items.ts';
import { actorStillHolds, pageThenMember } from '#lib/auth/team-access.ts';
import { canInviteAs, canManageInvites } from '#lib/auth/team-rules.ts';
import { config } from '#lib/core/config.ts';
import { AppError, notFound } from '#lib/core/errors.ts';
import { Page, type PageRequest } from '#lib/core/pagination.ts';
import { addDays, isoMillis } from '#lib/core/time.ts';
import type { InviteItem, TeamItem } from '#lib/db/items.ts';
import { cursorAfter, queryPage } from '#lib/db/pages.ts';
import type { Db } from '#lib/db/service.ts';
import { commit, named, write } from '#lib/db/transactions.ts';
import { auditActor, audited } from '#lib/events/audit.ts';
import { blockOf, blocks } from '#lib/mail/blocks.ts';
import { suppressedError, suppressionOf } from '#lib/mail/suppression.ts';
import { type InviteView, inviteView } from '#lib/wire/views.ts';
import { ownItem, requireConfirmed, requireInviteManager, sendingOnly, takeInviteMail } from './access.ts';
import { endInvite, inviteTarget, isExpired, mailFor, pendingTtl, renewPending } from './lifecycle.ts';

const NOT_FOUND = 'No pending invite with that id in this team.';

/** The team's pending, unexpired invites, oldest first, with their inviters in step two's BatchGetItem. */
export const listTeamInvites = async (db: Db, claims: Claims, slug: string, request: PageRequest, now: Date): Promise<Page<InviteView>> => {
  const {
    team: t,
    me,
    page,
    also: inviters,
  } = await pageThenMember(
    db,
    slug,
    claims,
    (teamId) =>
      queryPage(
        db,
        `team-invites ${teamId}`,
        (options) =>
          db.entities.invite.query
            .byTeam({ teamId, status: 'PENDING' })
            .where((a, op) => op.gt(a.expiresAt, isoMillis(now)))
            .go(options),
        request,
        cursorAfter(db.entities.invite, 'byTeam'),
      ),
    (items) => items.map((i) => [db.entities.user, { userUuid: i.invitedByUuid }] as const),
  );
  if (!canManageInvites(me.role)) throw new AppError('forbidden');
  return new Page(
    page.items.map((i, n) => inviteView(i, t, inviters[n] ?? undefined)),
    page.cursor,
  );
};

/** The team's invite with this integer id if its status is one of `statuses`: one Query (`Limit` 1) per status, side by side. */
const teamInviteById = async (
  db: Db,
  teamId: number,
  inviteId: number,
  statuses: readonly InviteItem['status'][],
): Promise<InviteItem | undefined> => {
  const pages = await Promise.all(statuses.map((status) => db.entities.invite.query.byTeam({ teamId, status, inviteId }).go({ limit: 1 })));
  return pages.flatMap((page) => page.data)[0];
};

/** A pending invite of this team by its integer id; expired or ended invites are not found. */
const findTeamInvite = async (db: Db, t: TeamItem, inviteId: number, now: Date): Promise<InviteItem> => {
  const found = await teamInviteById(db, t.teamId, inviteId, ['PENDING']);
  if (!found || isExpired(found, now)) throw notFound(NOT_FOUND);
  return found;
};

/**
 * Sends a pending invite again, with a fresh expiry (an expired one comes back to life, as with a
 * re-invite), under the team's and the sender's mail limits (given back if the transaction is
 * refused). Resend follows the rights of inviting with that role. The invite is found (also once
 * swept EXPIRED) between requireMember's two reads, so that its address's suppression item and
 * the actor's user item ride in the second. Throws `forbidden`, `not_found`, `email_not_verified`,
 * `validation_failed` (a suppressed address), `rate_limited`, `conflict`.
 */
export const resendInvite = async (db: Db, claims: Claims, slug: string, inviteId: number, now: Date): Promise<Record<string, never>> => {
  const {
    team: t,
    me,
    actor,
    page,
    also: [sender, suppressed, block],
  } = await pageThenMember(
    db,
    slug,
    claims,
    async (teamId) => {
      const found = await teamInviteById(db, teamId, inviteId, ['PENDING', 'EXPIRED']);
      return new Page(found ? [found] : [], null);
    },
    (items, a) => [ownItem(db, a.userUuid), ...items.flatMap((i) => [suppressionOf(db, i.email), blockOf(db, i.email)])] as const,
  );
  if (!canManageInvites(me.role)) throw new AppError('forbidden');
  const found = page.items[0];
  if (!found) throw notFound(NOT_FOUND);
  if (!canInviteAs(me.role, found.role)) throw new AppError('forbidden', 'Only an owner can resend an invite as owner.');
  requireConfirmed(sender);
  if (suppressed || blocks(block as Parameters<typeof blocks>[0], t.teamId)) throw suppressedError();
  const tokens = await takeInviteMail(db, t.teamId, actor.userUuid, found.email, now);
  const expires = addDays(now, config.inviteDays);
  await sendingOnly(db, tokens, () =>
    commit(
      () =>
        write(db, (tx) => [
          named(
            'pending',
            ...renewPending(tx, found, { expiresAt: isoMillis(expires), updatedAt: isoMillis(now), ttl: pendingTtl(expires) }),
          ),
          named('actorRole', actorStillHolds(tx, me)),
          named('mail', mailFor(tx, 'invitation', found.inviteUuid, now)),
          named(
            'audit',
            audited(
              tx,
              {
                teamId: t.teamId,
                action: 'invite.resent',
                actor: auditActor(actor, me.userId),
                target: inviteTarget(found),
                changes: { expiresAt: { before: found.expiresAt, after: isoMillis(expires) } },
              },
              now,
            ),
          ),
        ]),
      // A message id clash is worth another try.
      {
        pending: () => notFound(NOT_FOUND),
        actorRole: () => new AppError('conflict'),
        mail: () => 'retry',
        audit: () => new AppError('conflict'),
      },
    ),
  );
  return {};
};

/** One pending invite of the team: found by id through gsi1, read with its inviter in step two. */
export const getTeamInvite = async (db: Db, claims: Claims, slug: string, inviteId: number, now: Date): Promise<InviteView> => {
  const {
    team: t,
    me,
    page,
    also: [inviter],
  } = await pageThenMember(
    db,
    slug,
    claims,
    async (teamId) => {
      const { data } = await db.entities.invite.query.byTeam({ teamId, status: 'PENDING', inviteId }).go({ limit: 1 });
      return new Page(data, null);
    },
    (items) => items.map((i) => [db.entities.user, { userUuid: i.invitedByUuid }] as const),
  );
  if (!canManageInvites(me.role)) throw new AppError('forbidden');
  const found = page.items[0];
  if (!found || isExpired(found, now)) throw notFound(NOT_FOUND);
  return inviteView(found, t, inviter ?? undefined);
};

/**
 * Revokes a pending invite. The revoke's conditions include the expiry it read, so one that a
 * resend or re-invite renewed meanwhile is read again (base table) and revoked as it now is.
 * Throws `forbidden`, `not_found`.
 */
export const deleteInvite = async (db: Db, claims: Claims, slug: string, inviteId: number, now: Date): Promise<Record<string, never>> => {
  const { team: t, me, actor } = await requireInviteManager(db, claims, slug);
  let found = await findTeamInvite(db, t, inviteId, now);
  let readAgain = false;
  await commit(
    async () => {
      if (readAgain) {
        const again = (await db.entities.invite.get({ inviteUuid: found.inviteUuid }).go({ consistent: true })).data;
        if (!again || again.status !== 'PENDING' || isExpired(again, now)) throw notFound(NOT_FOUND);
        found = again;
      }
      return write(db, (tx) => [
        ...endInvite(tx, found, 'REVOKED', now),
        named('actorRole', actorStillHolds(tx, me)),
        named(
          'audit',
          audited(
            tx,
            {
              teamId: t.teamId,
              action: 'invite.deleted',
              actor: auditActor(actor, me.userId),
              target: inviteTarget(found),
              changes: { status: { before: 'PENDING', after: 'REVOKED' } },
            },
            now,
          ),
        ),
      ]);
    },
    {
      invite: () => {
        readAgain = true;
        return 'retry';
      },
      pending: () => notFound(NOT_FOUND),
      actorRole: () => new AppError('conflict'),
      audit: () => new AppError('conflict'),
    },
  );
  return {};
};
