import { randomUUID } from 'node:crypto';
import type { Actor } from './auth/actor.ts';
import { config } from './config.ts';
import { limitTeamMail } from './auth/limits.ts';
import { readAsActor } from './auth/session-items.ts';
import { hydrate } from './db/lookups.ts';
import { cursorAfter, queryPage } from './db/pages.ts';
import type { Db, Tx } from './db/service.ts';
import { commit } from './db/transactions.ts';
import { AppError, notFound } from './errors.ts';
import { newId } from './ids.ts';
import { Page, type PageRequest } from './pagination.ts';
import { canInviteAs, canManageInvites } from './rules.ts';
import type { InviteInput } from './schemas.ts';
import { actorStillHolds, pageThenMember, requireMember } from './teams.ts';
import { addDays, epochSeconds, isoMillis } from './time.ts';
import { type InviteItem, type InviteView, type TeamItem, inviteView } from './views.ts';

const NOT_FOUND = 'No pending invite with that id in this team.';

/** Ended invites stay readable for a while (so a second accept gets 409, not 404), then TTL removes them. */
const endedTtl = (now: Date): number => epochSeconds(addDays(now, config.endedInviteRetentionDays));

/** Pending invites are removed by TTL a retention period after they expire. */
const pendingTtl = (expiresAt: Date): number => epochSeconds(addDays(expiresAt, config.endedInviteRetentionDays));

const isExpired = (i: InviteItem, now: Date): boolean => i.expiresAt <= isoMillis(now);

/**
 * The outbox message that asks for an e-mail, written in the same transaction as the change that
 * calls for it: the mailer (functions/mailer.ts) sends it from the table's stream.
 */
const mailFor = (tx: Tx, kind: 'invitation' | 'declined', inviteUuid: string, now: Date) =>
  tx.outboxMessage
    .create({ messageId: randomUUID(), kind, inviteUuid, status: 'PENDING', createdAt: isoMillis(now), ttl: endedTtl(now) })
    .commit();

const requireInviteManager = async (db: Db, actor: Actor, slug: string) => {
  const access = await requireMember(db, slug, actor);
  if (!canManageInvites(access.me.role)) throw new AppError('forbidden');
  return access;
};

/**
 * The updates that keep a pending invite and its claim alive with new values (re-invite, resend):
 * only while the invite is still pending and the claim still points at it; the claim's TTL follows.
 */
const renewPending = (
  tx: Tx,
  i: { inviteUuid: string; teamId: number; email: string },
  changes: { expiresAt: string; updatedAt: string; ttl: number; role?: InviteItem['role']; invitedByUuid?: string },
) => [
  tx.invite
    .patch({ inviteUuid: i.inviteUuid })
    .set(changes)
    .where((a, op) => op.eq(a.status, 'PENDING'))
    .commit(),
  tx.pendingInvite
    .patch({ teamId: i.teamId, email: i.email })
    .set({ ttl: changes.ttl })
    .where((a, op) => op.eq(a.inviteUuid, i.inviteUuid))
    .commit(),
];

/** The invite a (team, e-mail) claim points at: `claimed` is its UUID, `pending` the invite if still pending. */
const lookUpPending = async (db: Db, teamId: number, email: string) => {
  const claim = (await db.entities.pendingInvite.get({ teamId, email }).go({ consistent: true })).data;
  if (!claim) return { claimed: undefined, pending: undefined };
  const found = (await db.entities.invite.get({ inviteUuid: claim.inviteUuid }).go({ consistent: true })).data;
  return { claimed: claim.inviteUuid, pending: found?.status === 'PENDING' ? found : undefined };
};

/**
 * Invites an e-mail address to the team. If that address already has a pending invite to this
 * team, it is updated (role, expiry, inviter) instead: one pending invite per address and team,
 * kept by the pendingInvite claim item. Inviting a current member is refused by a condition on
 * their membership key inside the same transaction. Throws `forbidden`, `already_member`, `conflict`.
 */
export const createInvite = async (db: Db, actor: Actor, slug: string, input: InviteInput, now: Date): Promise<Record<string, never>> => {
  const { team: t, me } = await requireInviteManager(db, actor, slug);
  if (!canInviteAs(me.role, input.role)) throw new AppError('forbidden', 'Only an owner can invite an owner.');
  await limitTeamMail(db, t.teamId, now);
  const stamp = isoMillis(now);
  const expires = addDays(now, config.inviteDays);
  const ttl = pendingTtl(expires);

  const [account, firstLook] = await Promise.all([
    db.entities.emailClaim.get({ email: input.email }).go({ consistent: true }),
    lookUpPending(db, t.teamId, input.email),
  ]);
  let found = firstLook;
  // An invitee with an account must not be a member; one without cannot be yet. The actor is a
  // member by definition (and a transaction may not check one item twice).
  const inviteeUuid = account.data?.userUuid;
  if (inviteeUuid === actor.userUuid) throw new AppError('already_member');
  const notMember = (tx: Tx) =>
    inviteeUuid ? [tx.membership.check({ teamId: t.teamId, userUuid: inviteeUuid }).where((a, op) => op.notExists(a.userUuid)).commit()] : [];
  const changes = { role: input.role, invitedByUuid: actor.userUuid, expiresAt: isoMillis(expires), updatedAt: stamp, ttl };

  let lookAgain = false;
  await commit(
    async () => {
      if (lookAgain) found = await lookUpPending(db, t.teamId, input.email);
      const { claimed, pending } = found;
      if (pending) {
        // Re-invite: refresh the pending invite the claim points at, and the claim's TTL with it.
        return db.transaction
          .write((tx) => [
            ...notMember(tx),
            actorStillHolds(tx, me),
            ...renewPending(tx, pending, changes),
            mailFor(tx, 'invitation', pending.inviteUuid, now),
          ])
          .go();
      }
      const inviteUuid = randomUUID();
      const inviteId = newId(now);
      return db.transaction
        .write((tx) => [
          ...notMember(tx),
          actorStillHolds(tx, me),
          // Take the claim if nobody holds it, or if it points at an invite that is gone.
          tx.pendingInvite
            .put({ teamId: t.teamId, email: input.email, inviteUuid, ttl })
            .where((a, op) => (claimed ? `${op.notExists(a.inviteUuid)} OR ${op.eq(a.inviteUuid, claimed)}` : op.notExists(a.inviteUuid)))
            .commit(),
          tx.idClaim.create({ kind: 'invite', id: inviteId }).commit(),
          tx.invite
            .create({ inviteUuid, inviteId, teamId: t.teamId, email: input.email, status: 'PENDING', createdAt: stamp, ...changes })
            .commit(),
          mailFor(tx, 'invitation', inviteUuid, now),
        ])
        .go();
    },
    (index) => {
      const offset = inviteeUuid ? 1 : 0;
      if (offset === 1 && index === 0) return new AppError('already_member');
      if (index === offset) return new AppError('conflict');
      // The pending invite ended or changed meanwhile, another request took the claim first, or
      // a fresh id clashed: look again and retry.
      lookAgain = true;
      return 'retry';
    },
  );
  return {};
};

/** The team's pending, unexpired invites, oldest first, with their inviters in step two's BatchGetItem. */
export const listTeamInvites = async (db: Db, actor: Actor, slug: string, request: PageRequest, now: Date): Promise<Page<InviteView>> => {
  const { team: t, me, page, also: inviters } = await pageThenMember(
    db,
    slug,
    actor,
    (teamId) =>
      queryPage(
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

/** A pending invite of this team by its integer id; expired or ended invites are not found. */
const findTeamInvite = async (db: Db, t: TeamItem, inviteId: number, now: Date, { expiredToo = false } = {}): Promise<InviteItem> => {
  const { data } = await db.entities.invite.query.byTeam({ teamId: t.teamId, status: 'PENDING', inviteId }).go({ limit: 1 });
  const found = data[0];
  if (!found || (isExpired(found, now) && !expiredToo)) throw notFound(NOT_FOUND);
  return found;
};

/**
 * Sends a pending invite again, with a fresh expiry (an expired one comes back to life, as with a
 * re-invite), under the team's mail limit. Resend follows the rights of inviting with that role.
 * Throws `forbidden`, `not_found`, `rate_limited`, `conflict`.
 */
export const resendInvite = async (db: Db, actor: Actor, slug: string, inviteId: number, now: Date): Promise<Record<string, never>> => {
  const { team: t, me } = await requireInviteManager(db, actor, slug);
  const found = await findTeamInvite(db, t, inviteId, now, { expiredToo: true });
  if (!canInviteAs(me.role, found.role)) throw new AppError('forbidden', 'Only an owner can resend an invite as owner.');
  await limitTeamMail(db, t.teamId, now);
  const expires = addDays(now, config.inviteDays);
  await commit(
    () =>
      db.transaction
        .write((tx) => [
          ...renewPending(tx, found, { expiresAt: isoMillis(expires), updatedAt: isoMillis(now), ttl: pendingTtl(expires) }),
          actorStillHolds(tx, me),
          mailFor(tx, 'invitation', found.inviteUuid, now),
        ])
        .go(),
    (index) => (index < 2 ? notFound(NOT_FOUND) : index === 2 ? new AppError('conflict') : 'retry'),
  );
  return {};
};

/** One pending invite of the team: found by id through gsi1, read with its inviter in step two. */
export const getTeamInvite = async (db: Db, actor: Actor, slug: string, inviteId: number, now: Date): Promise<InviteView> => {
  const { team: t, me, page, also: [inviter] } = await pageThenMember(
    db,
    slug,
    actor,
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
 * The item updates that end an invite with `status`, if it is still pending and unexpired. With
 * `asRead`, also only if nothing changed since it was read: an accept must not grant a role that
 * a re-invite changed meanwhile.
 */
const endInvite = (tx: Tx, i: InviteItem, status: 'ACCEPTED' | 'DECLINED' | 'REVOKED', now: Date, asRead = false) => [
  tx.invite
    .patch({ inviteUuid: i.inviteUuid })
    .set({ status, updatedAt: isoMillis(now), ttl: endedTtl(now) })
    .composite({ teamId: i.teamId, email: i.email, inviteId: i.inviteId })
    .where((a, op) => {
      const pending = `${op.eq(a.status, 'PENDING')} AND ${op.gt(a.expiresAt, isoMillis(now))}`;
      return asRead ? `${pending} AND ${op.eq(a.updatedAt, i.updatedAt)}` : pending;
    })
    .commit(),
  tx.pendingInvite
    .delete({ teamId: i.teamId, email: i.email })
    .where((a, op) => op.eq(a.inviteUuid, i.inviteUuid))
    .commit(),
];

/** Revokes a pending invite. Throws `forbidden`, `not_found`. */
export const deleteInvite = async (db: Db, actor: Actor, slug: string, inviteId: number, now: Date): Promise<Record<string, never>> => {
  const { team: t, me } = await requireInviteManager(db, actor, slug);
  const found = await findTeamInvite(db, t, inviteId, now);
  await commit(
    () => db.transaction.write((tx) => [...endInvite(tx, found, 'REVOKED', now), actorStillHolds(tx, me)]).go(),
    (index) => (index < 2 ? notFound(NOT_FOUND) : new AppError('conflict')),
  );
  return {};
};

/**
 * Pending, unexpired invites addressed to the actor's e-mail, across teams: one Query, then one
 * BatchGetItem for their teams, inviters and the caller's session.
 */
export const listMyInvites = async (db: Db, actor: Actor, request: PageRequest, now: Date): Promise<Page<InviteView>> => {
  const page = await queryPage(
    (options) =>
      db.entities.invite.query
        .byEmail({ email: actor.email, status: 'PENDING' })
        .where((a, op) => op.gt(a.expiresAt, isoMillis(now)))
        .go(options),
    request,
    cursorAfter(db.entities.invite, 'byEmail'),
  );
  const { teams: teamById, users: inviters } = await hydrate(db, actor, {
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

/**
 * The invite behind `uuid`, for its addressee only, checked in this order: exists (404), is
 * addressed to the actor's e-mail (403), still pending (409), not expired (410).
 */
const ownPendingInvite = (found: InviteItem | null, actor: Actor, now: Date): InviteItem => {
  if (!found) throw notFound('No invite with that id.');
  if (found.email !== actor.email) throw new AppError('invite_email_mismatch');
  if (found.status !== 'PENDING') throw new AppError('invite_not_pending');
  if (isExpired(found, now)) throw new AppError('invite_expired');
  return found;
};

/** The invite again, after a write found it changed (the session was checked with the first read). */
const readInviteAgain = async (db: Db, actor: Actor, inviteUuid: string, now: Date): Promise<InviteItem> =>
  ownPendingInvite((await db.entities.invite.get({ inviteUuid }).go({ consistent: true })).data, actor, now);

/** What the invitee sees before answering. Throws `not_found`, `invite_email_mismatch`, `invite_not_pending`, `invite_expired`. */
export const getMyInvite = async (db: Db, actor: Actor, inviteUuid: string, now: Date): Promise<InviteView> => {
  const [found] = await readAsActor(db, actor, [[db.entities.invite, { inviteUuid }]] as const);
  const i = ownPendingInvite(found, actor, now);
  const { teams, users } = await hydrate(db, null, { teamIds: [i.teamId], userUuids: [i.invitedByUuid] });
  const team = teams.get(i.teamId);
  if (!team) throw notFound('No invite with that id.');
  return inviteView(i, team, users.get(i.invitedByUuid));
};

/**
 * Accepts: in one transaction the invite moves from PENDING (and unexpired) to ACCEPTED, its
 * claim goes, the membership is created (its key refuses a second one) and the team's counters
 * move (the team must still exist). Throws the codes of ownPendingInvite, `already_member`.
 */
export const acceptInvite = async (db: Db, actor: Actor, inviteUuid: string, now: Date): Promise<Record<string, never>> => {
  const [found, invitee] = await readAsActor(db, actor, [
    [db.entities.invite, { inviteUuid }],
    [db.entities.user, { userUuid: actor.userUuid }],
  ] as const);
  if (!invitee) throw new AppError('unauthorized');
  let i = ownPendingInvite(found, actor, now);
  const stamp = isoMillis(now);
  let readAgain = false;
  await commit(
    async () => {
      // After a failed condition on the invite: it ended (409/410 from here) or was re-sent (retry).
      if (readAgain) i = await readInviteAgain(db, actor, inviteUuid, now);
      const memberId = newId(now);
      return db.transaction
        .write((tx) => [
          ...endInvite(tx, i, 'ACCEPTED', now, true),
          tx.membership
            .create({ teamId: i.teamId, userUuid: invitee.userUuid, memberId, userId: invitee.userId, role: i.role, createdAt: stamp, updatedAt: stamp })
            .commit(),
          tx.team
            .patch({ teamId: i.teamId })
            .add({ memberCount: 1, ownerCount: i.role === 'OWNER' ? 1 : 0 })
            .commit(),
          tx.idClaim.create({ kind: 'membership', id: memberId }).commit(),
        ])
        .go();
    },
    (index) => {
      if (index <= 1) {
        readAgain = true;
        return 'retry';
      }
      if (index === 2) return new AppError('already_member');
      if (index === 3) return notFound('The team of this invite no longer exists.');
      return 'retry';
    },
  );
  return {};
};

/** Declines: the invite moves from PENDING to DECLINED. Throws the codes of ownPendingInvite. */
export const declineInvite = async (db: Db, actor: Actor, inviteUuid: string, now: Date): Promise<Record<string, never>> => {
  const [found] = await readAsActor(db, actor, [[db.entities.invite, { inviteUuid }]] as const);
  let i = ownPendingInvite(found, actor, now);
  let readAgain = false;
  await commit(
    async () => {
      if (readAgain) i = await readInviteAgain(db, actor, inviteUuid, now);
      return db.transaction
        .write((tx) => [...endInvite(tx, i, 'DECLINED', now), ...(config.declineNotice ? [mailFor(tx, 'declined', i.inviteUuid, now)] : [])])
        .go();
    },
    () => {
      readAgain = true;
      return 'retry';
    },
  );
  return {};
};
