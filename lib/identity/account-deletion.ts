import { verifyPassword } from '#lib/auth/passwords.ts';
import { type Claims, type ClientInfo, endSessionsOf, readAsActor, requireAal2 } from '#lib/auth/session-items.ts';
import { AppError } from '#lib/core/errors.ts';
import { readTogether } from '#lib/db/batch-read.ts';
import type { MembershipItem, TeamItem, UserItem } from '#lib/db/items.ts';
import type { Db, Tx } from '#lib/db/service.ts';
import { commit, named, write } from '#lib/db/transactions.ts';
import { type AuditActor, audited } from '#lib/events/audit.ts';
import { checkPasswordAttempt, limitPasswordChange, recordPasswordSuccess } from '#lib/limits/password-attempts.ts';
import { memberTarget } from '#lib/teams/members.ts';
import { SECOND_FACTOR_FIRST, hasVerifiedFactor } from './account.ts';
import type { UserDeleteInput } from '#lib/wire/schemas.ts';

/** DynamoDB's cap on the items of one transaction. */
const MAX_TRANSACTION_ITEMS = 100;
/** Reads and transactions again after a membership changed under them, before answering 409 `conflict`. */
const TRIES = 3;

interface Held {
  membership: MembershipItem;
  team: TeamItem;
}

/**
 * The user's memberships as they are now: every page of gsi1 (byUser), then the memberships
 * themselves (their current role) and their teams (`ownerCount`) in strongly consistent
 * BatchGetItems. Memberships of a deleted team are left to its cleanup job. gsi1 may lag a
 * membership committed a moment before (an accept racing the deletion): that one is missed and
 * stays, its user gone (member lists leave it out).
 */
const membershipsOf = async (db: Db, userUuid: string): Promise<Held[]> => {
  const { data: listed } = await db.entities.membership.query.byUser({ userUuid }).go({ pages: 'all' });
  const found = await readTogether(db, [
    ...listed.map((m) => [db.entities.membership, { teamId: m.teamId, userUuid }] as const),
    ...listed.map((m) => [db.entities.team, { teamId: m.teamId }] as const),
  ]);
  return listed.flatMap((_, i) => {
    const membership = found[i] as MembershipItem | null;
    const team = found[listed.length + i] as TeamItem | null;
    return membership && team ? [{ membership, team }] : [];
  });
};

const soleOwner = (slugs: string[]): AppError =>
  new AppError('sole_owner', `You are the only owner of ${slugs.join(', ')}: make someone else an owner, or delete those teams, first.`, {
    fields: { teams: slugs.join(', ') },
  });

/**
 * A membership's delete, only while it is as read (same id, same role): a promotion to OWNER
 * meanwhile would otherwise leave `ownerCount` counting a deleted owner. An OWNER's also takes one
 * off its team's `ownerCount` WHERE `ownerCount > 1`: the condition demotion and removal carry,
 * so of a deletion and a concurrent demotion of the other owner, one fails. The team's audit log
 * gets its `member.left` entry in the same transaction.
 */
const leave = (tx: Tx, { membership: m }: Held, by: AuditActor, now: Date) => [
  tx.membership
    .delete({ teamId: m.teamId, userUuid: m.userUuid })
    .where((a, op) => `${op.eq(a.role, m.role)} AND ${op.eq(a.memberId, m.memberId)}`)
    .commit(),
  ...(m.role === 'OWNER'
    ? [
        tx.team
          .patch({ teamId: m.teamId })
          .add({ ownerCount: -1 })
          .where((a, op) => op.gt(a.ownerCount, 1))
          .commit(),
      ]
    : []),
  audited(tx, { teamId: m.teamId, action: 'member.left', actor: by, target: memberTarget(m), changes: { role: { before: m.role } } }, now),
];

/** A membership's items in the transaction: its delete and audit entry, and an OWNER's `ownerCount`. */
const itemsOf = (h: Held): number => (h.membership.role === 'OWNER' ? 3 : 2);

/**
 * The user's own items the last transaction deletes: the user, its e-mail claim, its factors'
 * secrets, its passkeys' credential items, its recovery codes and its provider identities' claims.
 */
const ownItems = (u: UserItem): number =>
  3 + (u.factors ?? []).reduce((n, f) => n + (f.credentialId ? 2 : 1), 0) + (u.identities ?? []).length;

/**
 * The memberships in transactions of at most 100 items, the last of which also deletes the user's
 * own items: up to 29 owned teams (or 43 memberships) it is all one transaction.
 */
const batches = (held: Held[], own: number): Held[][] => {
  const out: Held[][] = [[]];
  let size = 0;
  for (const h of held) {
    if (size + itemsOf(h) > MAX_TRANSACTION_ITEMS) {
      out.push([]);
      size = 0;
    }
    (out[out.length - 1] as Held[]).push(h);
    size += itemsOf(h);
  }
  // Room for the user's own items.
  if (size + own > MAX_TRANSACTION_ITEMS) out.push([]);
  return out;
};

/**
 * Leaves every team, then deletes the user and its e-mail claim (the last batch carries those).
 * Resolves true when done, false when a membership changed meanwhile (read again and retry).
 * Throws `conflict` when the user changed (password or address) since it was read.
 */
const leaveAndDelete = async (db: Db, u: UserItem, held: Held[], by: AuditActor, now: Date): Promise<boolean> => {
  const all = batches(held, ownItems(u));
  for (const [n, batch] of all.entries()) {
    const last = n === all.length - 1;
    // Which condition failed: the user's (a 409) or a membership's or team's (read again).
    let changed = false;
    try {
      await commit(
        () =>
          write(db, (tx) => [
            named(
              'account',
              ...(last
                ? [
                    // Only the account as read: a password, address, factor or identity change meanwhile is a 409.
                    tx.user
                      .delete({ userUuid: u.userUuid })
                      .where(
                        (a, op) =>
                          `${op.eq(a.passwordHash, u.passwordHash)} AND ${op.eq(a.email, u.email)} AND ${
                            u.factorsVersion === undefined ? op.notExists(a.factorsVersion) : op.eq(a.factorsVersion, u.factorsVersion)
                          } AND ${
                            u.identitiesVersion === undefined
                              ? op.notExists(a.identitiesVersion)
                              : op.eq(a.identitiesVersion, u.identitiesVersion)
                          }`,
                      )
                      .commit(),
                    // Second factors (docs/mfa.md): the sealed keys and the recovery codes go with the account.
                    ...(u.factors ?? []).map((f) => tx.factor.delete({ userUuid: u.userUuid, factorId: f.id }).commit()),
                    // A passkey of a deleted account signs in no one.
                    ...(u.factors ?? []).flatMap((f) =>
                      f.credentialId ? [tx.passkeyCredential.delete({ credentialId: f.credentialId }).commit()] : [],
                    ),
                    // An identity of a deleted account signs in no one: the next sign-in with it makes a new account.
                    ...(u.identities ?? []).map((i) =>
                      tx.identityClaim
                        .delete({ provider: i.provider, subject: i.subject })
                        .where((a, op) => op.eq(a.userUuid, u.userUuid))
                        .commit(),
                    ),
                    // Only an account that ever had a factor can have codes: the others pay nothing for this.
                    ...(u.factorsVersion === undefined ? [] : [tx.recoveryCodes.delete({ userUuid: u.userUuid }).commit()]),
                    tx.emailClaim
                      .delete({ email: u.email })
                      .where((a, op) => op.eq(a.userUuid, u.userUuid))
                      .commit(),
                  ]
                : []),
            ),
            named('memberships', ...batch.flatMap((h) => leave(tx, h, by, now))),
          ]),
        {
          account: () => new AppError('conflict'),
          memberships: () => {
            changed = true;
            return new AppError('conflict');
          },
        },
      );
    } catch (error) {
      if (changed) return false;
      throw error;
    }
  }
  return true;
};

/**
 * Deletes the signed-in account (docs/accounts.md): with its current password, checked under the
 * limits of a password change. Refused with 409 `sole_owner` while the user is the only owner of a
 * team. The steps, each leaving a consistent state if the next fails: the memberships leave (an
 * OWNER's under `ownerCount > 1`, in the same transaction), the last transaction deleting the user
 * item, its e-mail claim (the address is free again), its factors' sealed keys and its recovery
 * codes; then every session ends. The id claim is
 * kept (user ids are never reused). Invites the user sent stay with their teams, their inviter
 * shown as null. Throws `unauthorized`, `validation_failed`, `rate_limited`, `sole_owner`, `conflict`.
 */
export const deleteAccount = async (
  db: Db,
  claims: Claims,
  input: UserDeleteInput,
  client: ClientInfo,
  now: Date,
): Promise<Record<string, never>> => {
  const {
    actor,
    items: [u],
  } = await readAsActor(db, claims, (userUuid) => [[db.entities.user, { userUuid }]] as const);
  if (!u) {
    // The account went, but the caller's session was still live: an earlier deletion failed
    // before its last step. Finish it.
    await endSessionsOf(db, actor.userUuid);
    return {};
  }
  if (hasVerifiedFactor(u)) requireAal2(actor, SECOND_FACTOR_FIRST);
  // The current password is guessed under the limits of a password change (lib/identity/account.ts).
  await limitPasswordChange(db, u.userUuid, now);
  const attempt = await checkPasswordAttempt(db, u.email, client.ip, now);
  if (!(await verifyPassword(u.passwordHash, input.currentPassword))) {
    throw new AppError('validation_failed', undefined, { fields: { currentPassword: 'is not your current password' } });
  }
  await recordPasswordSuccess(db, attempt);

  for (let tries = 1; ; tries++) {
    const held = await membershipsOf(db, u.userUuid);
    const sole = held.filter((h) => h.membership.role === 'OWNER' && h.team.ownerCount <= 1).map((h) => h.team.slug);
    if (sole.length > 0) throw soleOwner(sole);
    if (await leaveAndDelete(db, u, held, { userId: u.userId, email: u.email }, now)) break;
    if (tries === TRIES) throw new AppError('conflict');
  }
  // Strongly consistent: every session committed before is found and ended.
  await endSessionsOf(db, u.userUuid);
  return {};
};
