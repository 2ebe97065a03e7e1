import { randomUUID } from 'node:crypto';
import type { EntityItem } from 'electrodb';
import type { Claims } from '#lib/auth/session-items.ts';
import { actorStillHolds, memberOf, pageThenMember, teamIdOf } from '#lib/auth/team-access.ts';
import { config } from '#lib/core/config.ts';
import { AppError, notFound } from '#lib/core/errors.ts';
import { Page } from '#lib/core/pagination.ts';
import { addDays, expirySeconds, isoMillis } from '#lib/core/time.ts';
import type { AuditAction } from '#lib/db/entities/audit-actions.ts';
import type { Role } from '#lib/db/entities/roles.ts';
import type { transfer } from '#lib/db/entities/transfers.ts';
import type { MembershipItem, TeamItem, UserItem } from '#lib/db/items.ts';
import type { Db, Tx } from '#lib/db/service.ts';
import { commit, named, write } from '#lib/db/transactions.ts';
import { type AuditActor, type Changes, auditActor, audited } from '#lib/events/audit.ts';
import { limitTeamMail } from '#lib/limits/mail-allowances.ts';
import { takeUnsolicitedMail } from '#lib/limits/recipient-mail.ts';
import { isBlocked } from '#lib/mail/blocks.ts';
import { giveBack } from '#lib/limits/token-bucket.ts';
import type { Transfer } from '#lib/wire/responses.ts';
import type { TransferInput } from '#lib/wire/schemas.ts';

/** A transfer's audit entry: its target is the nominee. */
const transferAudited = (tx: Tx, t: TeamItem, action: AuditAction, by: AuditActor, open: TransferItem, now: Date, changes?: Changes) =>
  audited(
    tx,
    {
      teamId: t.teamId,
      action,
      actor: by,
      target: { type: 'transfer', id: open.nomineeMemberId, userId: open.nomineeUserId },
      ...(changes ? { changes } : {}),
    },
    now,
  );

/**
 * Ownership transfer by consent (docs/api.md, "Ownership transfer"). An OWNER nominates another
 * member; the nominee accepts or declines, the nominating owner may withdraw it. A team has one
 * transfer item, on a fixed key in its partition: a nomination puts it (replacing any open one),
 * and accept, decline and cancel delete it on the condition that it is still the transfer they read.
 * The accept swaps the two roles in one transaction, each membership only as it was when nominated,
 * so the team's owners are the same in number before and after and never zero in between.
 */
type TransferItem = EntityItem<ReturnType<typeof transfer>>;

/** How long a nomination can be accepted. */
export const TRANSFER_DAYS = 7;

const NO_TRANSFER = 'This team has no open ownership transfer.';
const NO_MEMBER = 'No member with that id in this team.';
const TEAM_GONE = 'The team no longer exists.';

const conflict = () => new AppError('conflict');
const stale = () => new AppError('transfer_stale');
const invalidNominee = (why: string) => new AppError('validation_failed', undefined, { fields: { memberId: why } });

/** The condition that a membership still is the one recorded: same id (not left and re-joined) and same role. */
const asRecorded =
  (role: Role, memberId: number) => (a: { role: unknown; memberId: unknown }, op: { eq: (a: unknown, v: unknown) => string }) =>
    `${op.eq(a.role, role)} AND ${op.eq(a.memberId, memberId)}`;

const transferView = (item: TransferItem, team: TeamItem, nominee: UserItem, nominator: UserItem): Transfer => ({
  id: item.transferId,
  team: { id: team.teamId, name: team.name, slug: team.slug },
  nominee: {
    memberId: item.nomineeMemberId,
    userId: item.nomineeUserId,
    email: nominee.email,
    firstName: nominee.firstName,
    lastName: nominee.lastName,
  },
  nominatedBy: { userId: item.nominatorUserId, email: nominator.email },
  createdAt: item.createdAt,
  expiresAt: item.expiresAt,
});

/**
 * Nominates member `input.memberId` as an owner in the caller's place. The member is found through
 * gsi2 between requireMember's two reads, so that both users (for the answer) ride in the second.
 * One transaction puts the team's transfer item (replacing any open one, unread), checks that the
 * caller is still an OWNER and the nominee still the membership read, and writes the nominee's
 * e-mail to the outbox. The e-mail spends a token of the team's mail allowance, given back when the
 * transaction is refused. Throws `not_found`, `forbidden`, `validation_failed`, `rate_limited`,
 * `conflict`.
 */
export const createTransfer = async (db: Db, claims: Claims, slug: string, input: TransferInput, now: Date): Promise<Transfer> => {
  const {
    team: t,
    me,
    actor,
    page,
    also: [nominator, nomineeUser],
  } = await pageThenMember(
    db,
    slug,
    claims,
    async (teamId) =>
      new Page((await db.entities.membership.query.byTeam({ teamId, memberId: input.memberId }).go({ limit: 1 })).data, null),
    (items, actor) =>
      [
        [db.entities.user, { userUuid: actor.userUuid }],
        ...items.map((m) => [db.entities.user, { userUuid: m.userUuid }] as const),
      ] as const,
  );
  if (me.role !== 'OWNER') throw new AppError('forbidden', 'Only an owner can hand over ownership.');
  const nominee = page.items[0];
  // A membership whose account is gone is on its way out with it.
  if (!nominee || !nomineeUser) throw notFound(NO_MEMBER);
  if (nominee.userUuid === me.userUuid) throw invalidNominee('must be another member: you are an owner already');
  if (nominee.role === 'OWNER') throw invalidNominee('is an owner already');
  if (!nominator) throw new AppError('unauthorized');

  const expires = addDays(now, TRANSFER_DAYS);
  const item: TransferItem = {
    teamId: t.teamId,
    transferId: randomUUID(),
    nomineeUserUuid: nominee.userUuid,
    nomineeMemberId: nominee.memberId,
    nomineeUserId: nominee.userId,
    nomineeRole: nominee.role,
    nominatorUserUuid: me.userUuid,
    nominatorMemberId: me.memberId,
    nominatorUserId: me.userId,
    createdAt: isoMillis(now),
    expiresAt: isoMillis(expires),
    ttl: expirySeconds(expires),
  };
  // The team's nomination mail and the nominee's allowance for unasked mail (lib/limits/recipient-mail.ts),
  // unless the nominee said no to the team's mail: then the nomination is made, not mailed, and spends nothing.
  const mailed = !(await isBlocked(db, nomineeUser.email, t.teamId));
  const recipient = mailed ? await takeUnsolicitedMail(db, 'transfer', nomineeUser.email, now) : [];
  const tokens = mailed
    ? [
        ...recipient,
        await limitTeamMail(db, t.teamId, now).catch(async (error: unknown) => {
          await Promise.all(recipient.map((token) => giveBack(db, token)));
          throw error;
        }),
      ]
    : [];
  try {
    await commit(
      () =>
        write(db, (tx) => [
          named('actorRole', actorStillHolds(tx, me)),
          named(
            'nominee',
            tx.membership
              .check({ teamId: t.teamId, userUuid: nominee.userUuid })
              .where(asRecorded(nominee.role, nominee.memberId))
              .commit(),
          ),
          named('transfer', tx.transfer.put(item).commit()),
          named(
            'audit',
            transferAudited(tx, t, 'transfer.created', auditActor(actor, me.userId), item, now, {
              nominee: { after: item.nomineeMemberId },
            }),
          ),
          named(
            'mail',
            ...(mailed
              ? [
                  tx.outboxMessage
                    .create({
                      messageId: randomUUID(),
                      kind: 'transfer',
                      teamId: t.teamId,
                      transferId: item.transferId,
                      status: 'PENDING',
                      createdAt: item.createdAt,
                      // Kept as long as the other messages (lib/teams/invites/lifecycle.ts), then TTL removes it.
                      ttl: expirySeconds(addDays(now, config.endedInviteRetentionDays)),
                    })
                    .commit(),
                ]
              : []),
          ),
        ]),
      // The transfer is put unconditionally; only a freshly drawn message id can clash.
      { actorRole: conflict, nominee: conflict, otherwise: () => 'retry' },
    );
  } catch (error) {
    // Refused (nothing written): no e-mail goes, so the allowance is not spent.
    if (error instanceof AppError) await Promise.all(tokens.map((token) => giveBack(db, token)));
    throw error;
  }
  return transferView(item, t, nomineeUser, nominator);
};

/** The team behind `slug`, the caller's membership and the team's transfer item: requireMember's two BatchGetItems. */
const withTransfer = async (db: Db, slug: string, claims: Claims) => {
  const { teamId, actor } = await teamIdOf(db, slug, claims);
  const {
    team,
    me,
    also: [found],
  } = await memberOf(db, teamId, slug, actor, [[db.entities.transfer, { teamId }]] as const);
  return { team, me, found, by: auditActor(actor, me.userId) };
};

const readTransfer = async (db: Db, teamId: number): Promise<TransferItem | null> =>
  (await db.entities.transfer.get({ teamId }).go({ consistent: true })).data;

/** Who may answer an open transfer: its nominee (accept, decline) or its nominator (cancel). Throws `not_found`, `forbidden`. */
type Party = (found: TransferItem, me: MembershipItem) => void;

const nomineeOnly: Party = (found, me) => {
  if (found.nomineeUserUuid !== me.userUuid) throw new AppError('forbidden', 'Only the nominated member can answer this transfer.');
};

const nominatorOnly: Party = (found, me) => {
  if (found.nominatorUserUuid !== me.userUuid)
    throw new AppError('forbidden', 'Only the owner who proposed this transfer can withdraw it.');
};

/** The transfer if it is open (there, unexpired) and the caller is `party` to it. */
const openFor = (found: TransferItem | null, me: MembershipItem, party: Party, now: Date): TransferItem => {
  if (!found || found.expiresAt <= isoMillis(now)) throw notFound(NO_TRANSFER);
  party(found, me);
  return found;
};

/**
 * Accepts the open transfer as its nominee. One transaction: the transfer item is deleted (still
 * this transfer, unexpired), the nominee's membership becomes OWNER and the nominator's ADMIN, each
 * only with the role and member id recorded at the nomination, and the team must still exist. The
 * owner count does not move (one OWNER in, one out; DynamoDB allows one action per item in a
 * transaction, so the team item is only checked). A transfer replaced, answered or withdrawn
 * meanwhile is read again. Throws `not_found`, `forbidden`, `transfer_stale`, `conflict`.
 */
export const acceptTransfer = async (db: Db, claims: Claims, slug: string, now: Date): Promise<Record<string, never>> => {
  const { team: t, me, found, by } = await withTransfer(db, slug, claims);
  let open = openFor(found, me, nomineeOnly, now);
  // The caller's membership, just read, already says whether the nominee's condition can hold.
  if (me.memberId !== open.nomineeMemberId || me.role !== open.nomineeRole) throw stale();
  const stamp = isoMillis(now);
  let readAgain = false;
  await commit(
    async () => {
      if (readAgain) open = openFor(await readTransfer(db, t.teamId), me, nomineeOnly, now);
      const { teamId } = t;
      return write(db, (tx) => [
        named(
          'team',
          tx.team
            .check({ teamId })
            .where((a, op) => op.exists(a.ownerCount))
            .commit(),
        ),
        named(
          'transfer',
          tx.transfer
            .delete({ teamId })
            .where((a, op) => `${op.eq(a.transferId, open.transferId)} AND ${op.gt(a.expiresAt, stamp)}`)
            .commit(),
        ),
        named(
          'nominee',
          tx.membership
            .patch({ teamId, userUuid: open.nomineeUserUuid })
            .set({ role: 'OWNER', updatedAt: stamp })
            .where(asRecorded(open.nomineeRole, open.nomineeMemberId))
            .commit(),
        ),
        named(
          'nominator',
          tx.membership
            .patch({ teamId, userUuid: open.nominatorUserUuid })
            .set({ role: 'ADMIN', updatedAt: stamp })
            .where(asRecorded('OWNER', open.nominatorMemberId))
            .commit(),
        ),
        named(
          'audit',
          transferAudited(tx, t, 'transfer.accepted', by, open, now, {
            nomineeRole: { before: open.nomineeRole, after: 'OWNER' },
            nominatorRole: { before: 'OWNER', after: 'ADMIN' },
          }),
        ),
      ]);
    },
    {
      team: () => notFound(TEAM_GONE),
      transfer: () => {
        readAgain = true;
        return 'retry';
      },
      nominee: stale,
      nominator: stale,
      audit: conflict,
    },
  );
  return {};
};

/** Deletes the open transfer for `party` (decline, cancel), on the condition that it is still the one read. */
const endTransfer = async (
  db: Db,
  claims: Claims,
  slug: string,
  party: Party,
  action: 'transfer.declined' | 'transfer.canceled',
  now: Date,
): Promise<Record<string, never>> => {
  const { team: t, me, found, by } = await withTransfer(db, slug, claims);
  let open = openFor(found, me, party, now);
  let readAgain = false;
  await commit(
    async () => {
      if (readAgain) open = openFor(await readTransfer(db, t.teamId), me, party, now);
      return write(db, (tx) => [
        named(
          'transfer',
          tx.transfer
            .delete({ teamId: t.teamId })
            .where((a, op) => op.eq(a.transferId, open.transferId))
            .commit(),
        ),
        named('audit', transferAudited(tx, t, action, by, open, now)),
      ]);
    },
    {
      transfer: () => {
        readAgain = true;
        return 'retry';
      },
      audit: conflict,
    },
  );
  return {};
};

/** Declines the open transfer as its nominee: nothing else changes. Throws `not_found`, `forbidden`, `conflict`. */
export const declineTransfer = (db: Db, claims: Claims, slug: string, now: Date): Promise<Record<string, never>> =>
  endTransfer(db, claims, slug, nomineeOnly, 'transfer.declined', now);

/** Withdraws the open transfer as the owner who proposed it. Throws `not_found`, `forbidden`, `conflict`. */
export const cancelTransfer = (db: Db, claims: Claims, slug: string, now: Date): Promise<Record<string, never>> =>
  endTransfer(db, claims, slug, nominatorOnly, 'transfer.canceled', now);
