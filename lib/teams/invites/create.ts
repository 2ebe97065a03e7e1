/** Inviting addresses into a team: one (createInvite) or many (inviteEach, for ./bulk.ts), each with its own checks and transaction. */
import { randomUUID } from 'node:crypto';
import type { Actor, Claims } from '#lib/auth/session-items.ts';
import { actorStillHolds } from '#lib/auth/team-access.ts';
import { canInviteAs } from '#lib/auth/team-rules.ts';
import { config } from '#lib/core/config.ts';
import { AppError, serviceUnavailable } from '#lib/core/errors.ts';
import { newId } from '#lib/core/ids.ts';
import { inFlight } from '#lib/core/in-flight.ts';
import { EVENT_METRICS } from '#lib/core/metric-names.ts';
import { recordEvent } from '#lib/core/metrics.ts';
import { addDays, isoMillis } from '#lib/core/time.ts';
import { readTogether } from '#lib/db/batch-read.ts';
import type { InviteItem, MembershipItem, TeamItem, UserItem } from '#lib/db/items.ts';
import type { Db, Tx } from '#lib/db/service.ts';
import { commit, named, write } from '#lib/db/transactions.ts';
import { auditActor, audited, changed } from '#lib/events/audit.ts';
import { UNSOLICITED_SPENT } from '#lib/limits/recipient-mail.ts';
import { type BucketToken, giveBack } from '#lib/limits/token-bucket.ts';
import { blockOf, blocks } from '#lib/mail/blocks.ts';
import { suppressedError, suppressionOf } from '#lib/mail/suppression.ts';
import type { InviteInput } from '#lib/wire/schemas.ts';
import { ownItem, requireConfirmed, requireInviteManager, sendingOnly, takeInviteMail } from './access.ts';
import { inviteTarget, isOpen, mailFor, pendingTtl, renewPending } from './lifecycle.ts';

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
  /** The addresses asked about that Roster no longer mails (lib/mail/suppression.ts), or whose owners said no to this team (lib/mail/blocks.ts). */
  suppressed: ReadonlySet<string>;
}

/**
 * Who may invite into this team, checked once for a request: the team, the caller's membership
 * (OWNER or ADMIN) and user item (a confirmed address), and the suppression and block items of
 * each of `emails`, in requireMember's two BatchGetItems (the second one per 100 keys). Throws
 * `not_found`, `forbidden`, `email_not_verified`.
 */
export const inviterOf = async (db: Db, claims: Claims, slug: string, emails: readonly string[]): Promise<Inviter> => {
  const {
    team,
    me,
    actor,
    also: [sender, ...perAddress],
  } = await requireInviteManager(
    db,
    claims,
    slug,
    (a) => [ownItem(db, a.userUuid), ...emails.flatMap((e) => [suppressionOf(db, e), blockOf(db, e)])] as const,
  );
  // Two items per address: its suppression, then its block.
  const refused = (n: number) => perAddress[2 * n] != null || blocks(perAddress[2 * n + 1] as Parameters<typeof blocks>[0], team.teamId);
  return {
    team,
    me,
    actor,
    sender: requireConfirmed(sender),
    suppressed: new Set(emails.filter((_, n) => refused(n))),
  };
};

/**
 * Invites one address as `inviter`, from its first look. If that address already has a pending
 * invite to this team, it is updated instead: a live one's role and inviter, with nothing mailed
 * (its link and expiry stand; the resend route mails again); an expired one is renewed and mailed.
 * One pending invite per address and team, kept by the pendingInvite claim item. Inviting a current member is refused by a condition on their membership key inside
 * the same transaction. A new invite's mail allowances (the team's, the sender's, the
 * recipient's) are charged only after every check that needs no transaction, and given back when
 * the transaction is refused: a 409 spends nothing. `idAt`: the millisecond its id is drawn
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
  // A new invite takes the mail allowances first, and so does an expired one brought back (its
  // mailed link is dead). A re-invite of a live invite changes its role and inviter and mails
  // nothing: its link, and the expiry the link carries, stand; only resend mails again. Taken or
  // given back below when a retry finds the other case.
  const live = (i: InviteItem) => i.status === 'PENDING' && i.expiresAt > stamp;
  const tokens: BucketToken[] = [];
  const take = async () => {
    if (tokens.length === 0) tokens.push(...(await takeInviteMail(db, t.teamId, actor.userUuid, input.email, now)));
  };
  const release = async () => {
    await Promise.all(tokens.splice(0).map((token) => giveBack(db, token)));
  };
  if (!firstLook.pending || !live(firstLook.pending)) await take();
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
          // Re-invite: update the invite the claim points at (and the claim's TTL with it). A live
          // one keeps its expiry and gets no mail; an expired one is renewed and mailed again.
          const revived = !live(pending);
          if (revived) await take();
          else await release();
          const update = revived ? changes : { ...changes, expiresAt: pending.expiresAt, ttl: pendingTtl(new Date(pending.expiresAt)) };
          written = { ...pending, ...update, status: 'PENDING' };
          const renewed = changed({ role: pending.role, expiresAt: pending.expiresAt }, { role: input.role, expiresAt: update.expiresAt });
          return write(db, (tx) => [
            named('notMember', ...notMember(tx)),
            named('actorRole', actorStillHolds(tx, me)),
            named('pending', ...renewPending(tx, pending, update)),
            named('mail', ...(revived ? [mailFor(tx, 'invitation', pending.inviteUuid, now)] : [])),
            named(
              'audit',
              audited(tx, { teamId: t.teamId, action: 'invite.created', actor: by, target: inviteTarget(pending), changes: renewed }, now),
            ),
          ]);
        }
        await take();
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
        // The team's or the sender's allowance spent stays so for the rest of the request; one
        // recipient's says nothing about the next row's.
        if (error instanceof AppError && error.code === 'rate_limited' && error.message !== UNSOLICITED_SPENT) spent ??= error;
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
