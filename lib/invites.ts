import { auditActor, audited, changed } from './audit.ts';
import { randomUUID } from 'node:crypto';
import { config } from './config.ts';
import { limitTeamMail, limitUserInviteMail } from './limits/mail-allowances.ts';
import { type BucketToken, giveBack } from './limits/token-bucket.ts';
import { type Actor, type Claims, readAsActor } from './auth/session-items.ts';
import { type Read, readTogether } from './db/batch-read.ts';
import { statusComposites } from './db/entities/invites.ts';
import { hydrate } from './db/lookups.ts';
import { cursorAfter, queryPage } from './db/pages.ts';
import type { Db, Tx } from './db/service.ts';
import { commit, named, write } from './db/transactions.ts';
import { AppError, notFound, serviceUnavailable } from './errors.ts';
import { newId } from './ids.ts';
import { inFlight } from './in-flight.ts';
import { suppressedError, suppressionOf } from './mail/suppression.ts';
import { EVENT_METRICS } from './metric-names.ts';
import { recordEvent } from './metrics.ts';
import { Page, type PageRequest } from './pagination.ts';
import { canInviteAs, canManageInvites } from './rules.ts';
import type { InviteInput } from './schemas.ts';
import { actorStillHolds, memberOf, pageThenMember, teamIdOf } from './teams.ts';
import { addDays, expirySeconds, isoMillis } from './time.ts';
import { type InviteItem, type InviteView, type MembershipItem, type TeamItem, type UserItem, inviteView } from './views.ts';

const NOT_FOUND = 'No pending invite with that id in this team.';

/** Ended invites stay readable for a while (so a second accept gets 409, not 404), then TTL removes them. */
const endedTtl = (now: Date): number => expirySeconds(addDays(now, config.endedInviteRetentionDays));

/** Pending invites are removed by TTL a retention period after they expire. */
const pendingTtl = (expiresAt: Date): number => expirySeconds(addDays(expiresAt, config.endedInviteRetentionDays));

const isExpired = (i: InviteItem, now: Date): boolean => i.expiresAt <= isoMillis(now);

/** Not ended: PENDING, or EXPIRED (pending past its expiry, swept out of the lists); a re-invite or resend revives it. */
const isOpen = (i: InviteItem): boolean => i.status === 'PENDING' || i.status === 'EXPIRED';

/**
 * The outbox message that asks for an e-mail, written in the same transaction as the change that
 * calls for it: the mailer (functions/mailer.ts) sends it from the table's stream.
 */
const mailFor = (tx: Tx, kind: 'invitation' | 'declined', inviteUuid: string, now: Date) =>
  tx.outboxMessage
    .create({ messageId: randomUUID(), kind, inviteUuid, status: 'PENDING', createdAt: isoMillis(now), ttl: endedTtl(now) })
    .commit();

/** The caller's own user item, read with the rest of a request's items (never a request of its own). */
const ownItem = (db: Db, userUuid: string) => [db.entities.user, { userUuid }] as const satisfies Read;

/** The actor's user item; gone means the account was deleted (its sessions with it). Throws `unauthorized`. */
const accountOf = (u: UserItem | null): UserItem => {
  if (!u) throw new AppError('unauthorized');
  return u;
};

/**
 * Sending, reading and answering invites need a confirmed address (config
 * `invitesRequireVerifiedEmail`): an unconfirmed account could be anyone's address. Throws
 * `unauthorized`, `email_not_verified`.
 */
const requireConfirmed = (u: UserItem | null): UserItem => {
  const account = accountOf(u);
  if (config.invitesRequireVerifiedEmail && !account.emailConfirmedAt) throw new AppError('email_not_verified');
  return account;
};

/**
 * Takes a token from the team's and the sender's invitation-mail buckets, side by side. If either
 * refuses, the other's token goes back: nothing is sent. Throws 429 or 503.
 */
const takeInviteMail = async (db: Db, teamId: number, userUuid: string, now: Date): Promise<BucketToken[]> => {
  const taken = await Promise.allSettled([limitTeamMail(db, teamId, now), limitUserInviteMail(db, userUuid, now)]);
  const refused = taken.find((t) => t.status === 'rejected');
  const tokens = taken.flatMap((t) => (t.status === 'fulfilled' ? [t.value] : []));
  if (!refused) return tokens;
  await Promise.all(tokens.map((t) => giveBack(db, t)));
  throw refused.reason;
};

/**
 * Runs the transaction that writes the invitation's outbox message. Only mail sent counts: when
 * the transaction is refused (an AppError: a failed condition, a conflict, throttling; none of
 * them wrote anything), the tokens go back. Any other failure may have committed, so they stay.
 */
const sendingOnly = async (db: Db, tokens: BucketToken[], write: () => Promise<void>): Promise<void> => {
  try {
    await write();
  } catch (error) {
    if (error instanceof AppError) await Promise.all(tokens.map((t) => giveBack(db, t)));
    throw error;
  }
};

/** requireMember, for OWNER and ADMIN only; `also` rides in its second BatchGetItem (memberOf). */
const requireInviteManager = async <const T extends readonly Read[]>(
  db: Db,
  claims: Claims,
  slug: string,
  also: (actor: Actor) => T = () => [] as unknown as T,
) => {
  const { teamId, actor } = await teamIdOf(db, slug, claims);
  const access = await memberOf(db, teamId, slug, actor, also(actor));
  if (!canManageInvites(access.me.role)) throw new AppError('forbidden');
  return { ...access, actor };
};

/**
 * The updates that keep a pending invite and its claim alive with new values (re-invite, resend):
 * only while the invite is still open (an EXPIRED one becomes PENDING again, back in the lists) and
 * the claim still points at it; the claim's TTL follows.
 */
const renewPending = (
  tx: Tx,
  i: InviteItem,
  changes: { expiresAt: string; updatedAt: string; ttl: number; role?: InviteItem['role']; invitedByUuid?: string },
) => [
  tx.invite
    .patch({ inviteUuid: i.inviteUuid })
    .set({ ...changes, status: 'PENDING' })
    .composite({ teamId: i.teamId, email: i.email, inviteId: i.inviteId })
    // Parenthesised: ElectroDB ANDs this after the key and composite conditions.
    .where((a, op) => `(${op.eq(a.status, 'PENDING')} OR ${op.eq(a.status, 'EXPIRED')})`)
    .commit(),
  tx.pendingInvite
    .patch({ teamId: i.teamId, email: i.email })
    .set({ ttl: changes.ttl })
    .where((a, op) => op.eq(a.inviteUuid, i.inviteUuid))
    .commit(),
];

/** An invite as the audit log names it: its id and address. */
const inviteTarget = (i: InviteItem) => ({ type: 'invite', id: i.inviteId, email: i.email }) as const;

/** The invite a (team, e-mail) claim points at: `claimed` is its UUID, `pending` the invite if still open. */
const lookUpPending = async (db: Db, teamId: number, email: string) => {
  const claim = (await db.entities.pendingInvite.get({ teamId, email }).go({ consistent: true })).data;
  if (!claim) return { claimed: undefined, pending: undefined };
  const found = (await db.entities.invite.get({ inviteUuid: claim.inviteUuid }).go({ consistent: true })).data;
  return { claimed: claim.inviteUuid, pending: found && isOpen(found) ? found : undefined };
};

/** What an invite to an address finds before it writes: its account, and the claim's invite (lookUpPending). */
interface FirstLook {
  inviteeUuid: string | undefined;
  claimed: string | undefined;
  pending: InviteItem | undefined;
}

/**
 * lookUpPending and the accounts for many addresses at once, strongly consistent: their e-mail
 * claims and (team, e-mail) claims in two BatchGetItems side by side, then the invites those claims
 * point at in a third (none when no address has one).
 */
const lookFirst = async (db: Db, teamId: number, emails: readonly string[]): Promise<FirstLook[]> => {
  const [accounts, claims] = await Promise.all([
    readTogether(
      db,
      emails.map((email) => [db.entities.emailClaim, { email }] as const),
    ),
    readTogether(
      db,
      emails.map((email) => [db.entities.pendingInvite, { teamId, email }] as const),
    ),
  ]);
  const claimed = claims.flatMap((c) => (c ? [c.inviteUuid] : []));
  const invites = claimed.length
    ? await readTogether(
        db,
        claimed.map((inviteUuid) => [db.entities.invite, { inviteUuid }] as const),
      )
    : [];
  const byUuid = new Map(invites.flatMap((i) => (i ? [[i.inviteUuid, i] as const] : [])));
  return emails.map((_, n) => {
    const inviteUuid = claims[n]?.inviteUuid;
    const found = inviteUuid === undefined ? undefined : byUuid.get(inviteUuid);
    return { inviteeUuid: accounts[n]?.userUuid, claimed: inviteUuid, pending: found && isOpen(found) ? found : undefined };
  });
};

/** Who invites, read once per request however many addresses it invites (inviterOf). */
export interface Inviter {
  team: TeamItem;
  me: MembershipItem;
  actor: Actor;
  /** The caller's user item, its address confirmed: each invite's `invitedBy`. */
  sender: UserItem;
  /** The addresses asked about that Roster no longer mails (lib/mail/suppression.ts). */
  suppressed: ReadonlySet<string>;
}

/**
 * Who may invite into this team, checked once for a request: the team, the caller's membership
 * (OWNER or ADMIN) and user item (a confirmed address), and the suppression item of each of
 * `emails`, in requireMember's two BatchGetItems (the second one per 100 keys). Throws
 * `not_found`, `forbidden`, `email_not_verified`.
 */
export const inviterOf = async (db: Db, claims: Claims, slug: string, emails: readonly string[]): Promise<Inviter> => {
  const {
    team,
    me,
    actor,
    also: [sender, ...suppressions],
  } = await requireInviteManager(db, claims, slug, (a) => [ownItem(db, a.userUuid), ...emails.map((e) => suppressionOf(db, e))] as const);
  return {
    team,
    me,
    actor,
    sender: requireConfirmed(sender),
    suppressed: new Set(emails.filter((_, n) => suppressions[n])),
  };
};

/**
 * Invites one address as `inviter`, from its first look. If that address already has a pending
 * invite to this team, it is updated (role, expiry, inviter) instead: one pending invite per
 * address and team, kept by the pendingInvite claim item. Inviting a current member is refused by
 * a condition on their membership key inside the same transaction. The team's and the sender's
 * mail allowances are charged only after every check that needs no transaction, and given back
 * when the transaction is refused: a 409 spends nothing. `idAt`: the millisecond its id is drawn
 * at. Returns the invite as written. Throws `already_member`, `rate_limited`, `conflict`.
 */
const inviteOne = async (
  db: Db,
  inviter: Inviter,
  input: InviteInput,
  firstLook: FirstLook,
  now: Date,
  idAt: Date,
): Promise<InviteItem> => {
  const { team: t, me, actor } = inviter;
  const stamp = isoMillis(now);
  const expires = addDays(now, config.inviteDays);
  const ttl = pendingTtl(expires);
  let found: Pick<FirstLook, 'claimed' | 'pending'> = firstLook;
  // An invitee with an account must not be a member; one without cannot be yet. The actor is a
  // member by definition (and a transaction may not check one item twice).
  const { inviteeUuid } = firstLook;
  if (inviteeUuid === actor.userUuid) throw new AppError('already_member');
  const tokens = await takeInviteMail(db, t.teamId, actor.userUuid, now);
  const notMember = (tx: Tx) =>
    inviteeUuid
      ? [
          tx.membership
            .check({ teamId: t.teamId, userUuid: inviteeUuid })
            .where((a, op) => op.notExists(a.userUuid))
            .commit(),
        ]
      : [];
  const changes = { role: input.role, invitedByUuid: actor.userUuid, expiresAt: isoMillis(expires), updatedAt: stamp, ttl };
  const by = auditActor(actor, me.userId);

  let written: InviteItem | undefined;
  let lookAgain = false;
  await sendingOnly(db, tokens, () =>
    commit(
      async () => {
        if (lookAgain) found = await lookUpPending(db, t.teamId, input.email);
        const { claimed, pending } = found;
        if (pending) {
          // Re-invite: refresh the pending invite the claim points at, and the claim's TTL with it.
          written = { ...pending, ...changes, status: 'PENDING' };
          const renewed = changed({ role: pending.role, expiresAt: pending.expiresAt }, { role: input.role, expiresAt: changes.expiresAt });
          return write(db, (tx) => [
            named('notMember', ...notMember(tx)),
            named('actorRole', actorStillHolds(tx, me)),
            named('pending', ...renewPending(tx, pending, changes)),
            named('mail', mailFor(tx, 'invitation', pending.inviteUuid, now)),
            named(
              'audit',
              audited(tx, { teamId: t.teamId, action: 'invite.created', actor: by, target: inviteTarget(pending), changes: renewed }, now),
            ),
          ]);
        }
        const created: InviteItem = {
          inviteUuid: randomUUID(),
          inviteId: newId(idAt),
          teamId: t.teamId,
          email: input.email,
          status: 'PENDING',
          createdAt: stamp,
          ...changes,
        };
        written = created;
        return write(db, (tx) => [
          named('notMember', ...notMember(tx)),
          named('actorRole', actorStillHolds(tx, me)),
          // Take the claim if nobody holds it, or if it points at an invite that is gone.
          named(
            'pending',
            tx.pendingInvite
              .put({ teamId: t.teamId, email: input.email, inviteUuid: created.inviteUuid, ttl })
              .where((a, op) => (claimed ? `${op.notExists(a.inviteUuid)} OR ${op.eq(a.inviteUuid, claimed)}` : op.notExists(a.inviteUuid)))
              .commit(),
          ),
          named('inviteId', tx.idClaim.create({ kind: 'invite', id: created.inviteId }).commit()),
          named('invite', tx.invite.create(created).commit()),
          named('mail', mailFor(tx, 'invitation', created.inviteUuid, now)),
          named(
            'audit',
            audited(
              tx,
              {
                teamId: t.teamId,
                action: 'invite.created',
                actor: by,
                target: inviteTarget(created),
                changes: changed({}, { role: created.role, expiresAt: created.expiresAt }),
              },
              now,
            ),
          ),
        ]);
      },
      {
        notMember: () => new AppError('already_member'),
        actorRole: () => new AppError('conflict'),
        // The pending invite ended or changed meanwhile, another request took the claim first, or
        // a fresh id clashed: look again and retry.
        otherwise: () => {
          lookAgain = true;
          return 'retry';
        },
      },
    ),
  );
  recordEvent(EVENT_METRICS.invitesCreated);
  // Set by every attempt, so by the one that committed.
  return written as InviteItem;
};

/** One address's outcome: the invite as written, or what refused it (an AppError, or any other failure as thrown). */
export type InviteOutcome = { invite: InviteItem } | { error: unknown };

/**
 * Addresses invited at once. Each one's reads and writes run one after the other (a few round
 * trips), so 8 side by side finish 100 in about 13 times one invite's time (docs/api.md).
 */
const INVITES_IN_FLIGHT = 8;

/**
 * Invites each of `inputs` (distinct addresses) as `inviter`, each on its own, in this order: an
 * address the caller may not give that role (403; an ADMIN cannot invite an OWNER) or that Roster
 * no longer mails (422) is refused without a request; the others get their first look together
 * (lookFirst), then are invited INVITES_IN_FLIGHT at a time (inviteOne). Once a mail allowance
 * refuses one (429), those not started yet are refused with it without trying: it stays spent for
 * longer than the request lasts. An input not started while `mayStart()` is false (the request's
 * time is running out) is answered 503. One outcome per input, in order.
 */
export const inviteEach = async (
  db: Db,
  inviter: Inviter,
  inputs: readonly InviteInput[],
  now: Date,
  mayStart: () => boolean = () => true,
): Promise<InviteOutcome[]> => {
  const outcomes = inputs.map((input): InviteOutcome | undefined => {
    if (!canInviteAs(inviter.me.role, input.role)) return { error: new AppError('forbidden', 'Only an owner can invite an owner.') };
    if (inviter.suppressed.has(input.email)) return { error: suppressedError() };
    return undefined;
  });
  const open = inputs.flatMap((input, n) => (outcomes[n] ? [] : [{ n, input }]));
  const looks = await lookFirst(
    db,
    inviter.team.teamId,
    open.map((o) => o.input.email),
  );
  let spent: AppError | undefined;
  await inFlight(
    open.map((o, k) => ({ ...o, look: looks[k] as FirstLook })),
    INVITES_IN_FLIGHT,
    async ({ n, input, look }) => {
      if (spent) {
        outcomes[n] = { error: spent };
        return;
      }
      if (!mayStart()) {
        outcomes[n] = { error: serviceUnavailable(1, 'Not started: the request ran out of time. Send this row again.') };
        return;
      }
      try {
        // Each row's id at a millisecond of its own (the request's plus the row's number): a hundred
        // ids drawn in one millisecond from its 4,096 would clash with odds of about 70%, each clash
        // costing a transaction, and the invites now list in row order.
        outcomes[n] = { invite: await inviteOne(db, inviter, input, look, now, new Date(now.getTime() + n)) };
      } catch (error) {
        if (error instanceof AppError && error.code === 'rate_limited') spent ??= error;
        outcomes[n] = { error };
      }
    },
  );
  return outcomes as InviteOutcome[];
};

/**
 * Invites an e-mail address to the team (inviterOf, then inviteEach with one address): the
 * caller's rights, then the role's, then the address's suppression, read with the team and
 * membership (no request of their own). Throws `forbidden`, `email_not_verified`,
 * `validation_failed`, `already_member`, `rate_limited`, `conflict`.
 */
export const createInvite = async (db: Db, claims: Claims, slug: string, input: InviteInput, now: Date): Promise<Record<string, never>> => {
  const inviter = await inviterOf(db, claims, slug, [input.email]);
  const [outcome] = await inviteEach(db, inviter, [input], now);
  if (outcome && 'error' in outcome) throw outcome.error;
  return {};
};

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
    also: [sender, suppressed],
  } = await pageThenMember(
    db,
    slug,
    claims,
    async (teamId) => {
      const found = await teamInviteById(db, teamId, inviteId, ['PENDING', 'EXPIRED']);
      return new Page(found ? [found] : [], null);
    },
    (items, a) => [ownItem(db, a.userUuid), ...items.map((i) => suppressionOf(db, i.email))] as const,
  );
  if (!canManageInvites(me.role)) throw new AppError('forbidden');
  const found = page.items[0];
  if (!found) throw notFound(NOT_FOUND);
  if (!canInviteAs(me.role, found.role)) throw new AppError('forbidden', 'Only an owner can resend an invite as owner.');
  requireConfirmed(sender);
  if (suppressed) throw suppressedError();
  const tokens = await takeInviteMail(db, t.teamId, actor.userUuid, now);
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
 * The item updates that end an invite with `status`, if it is still pending and unexpired. With
 * `asRead`, also only if nothing changed since it was read: an accept must not grant a role that
 * a re-invite changed meanwhile.
 */
const endInvite = (tx: Tx, i: InviteItem, status: 'ACCEPTED' | 'DECLINED' | 'REVOKED', now: Date, asRead = false) => [
  named(
    'invite',
    tx.invite
      .patch({ inviteUuid: i.inviteUuid })
      .set({ status, updatedAt: isoMillis(now), ttl: endedTtl(now) })
      .composite(statusComposites(i))
      .where((a, op) => {
        const pending = `${op.eq(a.status, 'PENDING')} AND ${op.gt(a.expiresAt, isoMillis(now))}`;
        return asRead ? `${pending} AND ${op.eq(a.updatedAt, i.updatedAt)}` : pending;
      })
      .commit(),
  ),
  named(
    'pending',
    tx.pendingInvite
      .delete({ teamId: i.teamId, email: i.email })
      .where((a, op) => op.eq(a.inviteUuid, i.inviteUuid))
      .commit(),
  ),
];

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
  stillOpen(i, await teamOf(db, i), now);
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
