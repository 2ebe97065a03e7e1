import { randomUUID } from 'node:crypto';
import type { WhereAttributeSymbol } from 'electrodb';
import { findToken, tokenExpired, useToken } from '#lib/auth/account-tokens.ts';
import { type Claims, readAsActor } from '#lib/auth/session-items.ts';
import { config } from '#lib/core/config.ts';
import { AppError } from '#lib/core/errors.ts';
import { addDays, expirySeconds, isoMillis } from '#lib/core/time.ts';
import type { OutboxKind } from '#lib/db/entities/outbox.ts';
import type { UserItem } from '#lib/db/items.ts';
import type { Db } from '#lib/db/service.ts';
import { commit, named, write } from '#lib/db/transactions.ts';
import { limitUserAccountMail } from '#lib/limits/mail-allowances.ts';
import type { VerifyInput } from '#lib/wire/schemas.ts';
import { userView } from '#lib/wire/views.ts';

/** The e-mails about an account (docs/accounts.md), as opposed to those about an invite. */
export type AccountMailKind = Exclude<OutboxKind, 'invitation' | 'declined'>;

/**
 * The outbox message asking the mailer for an account e-mail, to write in the transaction of the
 * change that calls for it (or alone, with PutItem). It carries no token: the mailer makes one when
 * it sends. `userUuid` is absent only for `recovery`, which the mailer looks up by address.
 */
export const accountMessage = (kind: AccountMailKind, to: { userUuid?: string; address: string }, now: Date) => ({
  messageId: randomUUID(),
  kind,
  ...(to.userUuid !== undefined ? { userUuid: to.userUuid } : {}),
  address: to.address,
  status: 'PENDING' as const,
  createdAt: isoMillis(now),
  // Kept as long as invitation messages (lib/teams/invites/lifecycle.ts), then TTL removes it.
  ttl: expirySeconds(addDays(now, config.endedInviteRetentionDays)),
});

/** The comparisons a where-callback's `op` offers that tokenEpochIs needs (ElectroDB's, for any entity). */
interface EpochOps {
  eq: <T, A extends WhereAttributeSymbol<T>>(attr: A, value: T) => string;
  notExists: <T, A extends WhereAttributeSymbol<T>>(attr: A) => string;
}

/**
 * The condition "the account still has the `tokenEpoch` the token was issued under" (absent
 * counts as 0), for the user update in the token's transaction: a password change or reset, or a
 * confirmed e-mail change, since the token was made voids it.
 */
export const tokenEpochIs = (tokenEpoch: WhereAttributeSymbol<number>, op: EpochOps, epoch: number | undefined): string =>
  epoch === undefined || epoch === 0 ? `(${op.notExists(tokenEpoch)} OR ${op.eq(tokenEpoch, 0)})` : op.eq(tokenEpoch, epoch);

/**
 * Uses a `verification` or `email_change` token (any other purpose, or none live: 410). Reads the
 * token and its account (both strongly consistent), then one transaction that uses the token up
 * and changes the account; the transaction's conditions, not the reads, decide:
 * - verification: sets `emailConfirmedAt` (an earlier one stays) while the account still has the
 *   address and `tokenEpoch` the token was issued for;
 * - email_change: makes the pending address the account's (confirmed), bumping `tokenEpoch`, while
 *   that address is still the pending one and the epoch unchanged; moves the e-mail claim, so a new
 *   address claimed meanwhile (a sign-up) refuses the change with 409 and the token stays usable.
 * Returns the account as it now is. Throws `token_expired`, `email_taken`.
 */
export const confirmEmailLink = async (db: Db, input: VerifyInput, now: Date): Promise<UserItem> => {
  const item = await findToken(db, input.token, ['verification', 'email_change'], now);
  if (item.userUuid === undefined) throw tokenExpired();
  const u = (await db.entities.user.get({ userUuid: item.userUuid }).go({ consistent: true })).data;
  // The transaction would refuse these too; refusing here spares it.
  if (!u || (item.purpose === 'verification' ? u.email : u.newEmail) !== item.email) throw tokenExpired();

  const stamp = isoMillis(now);
  if (item.purpose === 'verification') {
    await commit(
      () =>
        write(db, (tx) => [
          named('token', useToken(tx, item, now)),
          named(
            'account',
            tx.user
              .patch({ userUuid: u.userUuid })
              .set({ updatedAt: stamp })
              // A confirmation that landed since (a reset, another link) keeps its own time.
              .data((a, op) => {
                op.ifNotExists(a.emailConfirmedAt, stamp);
              })
              .where((a, op) => `${op.eq(a.email, item.email)} AND ${tokenEpochIs(a.tokenEpoch, op, item.epoch)}`)
              .commit(),
          ),
        ]),
      // The token was used meanwhile, or the account changed its address or epoch: either way the link is dead.
      { otherwise: () => tokenExpired() },
    );
    return { ...u, emailConfirmedAt: u.emailConfirmedAt ?? stamp, updatedAt: stamp };
  }

  const changed: UserItem = { ...u, email: item.email, emailConfirmedAt: stamp, updatedAt: stamp, tokenEpoch: (u.tokenEpoch ?? 0) + 1 };
  delete changed.newEmail;
  await commit(
    () =>
      write(db, (tx) => [
        named('token', useToken(tx, item, now)),
        named(
          'account',
          tx.user
            .patch({ userUuid: u.userUuid })
            .set({ email: item.email, emailConfirmedAt: stamp, updatedAt: stamp })
            .remove(['newEmail'])
            .add({ tokenEpoch: 1 })
            // The old address is the one whose claim goes below.
            .where(
              (a, op) =>
                `${op.eq(a.newEmail, item.email)} AND ${op.eq(a.email, u.email)} AND ${tokenEpochIs(a.tokenEpoch, op, item.epoch)}`,
            )
            .commit(),
        ),
        named(
          'oldAddress',
          tx.emailClaim
            .delete({ email: u.email })
            .where((a, op) => op.eq(a.userUuid, u.userUuid))
            .commit(),
        ),
        named('newAddress', tx.emailClaim.create({ email: item.email, userUuid: u.userUuid }).commit()),
      ]),
    // The token was used, or the account changed since (another change, a new pending address, a
    // password change): the link is dead. Or someone claimed the new address meanwhile.
    { token: tokenExpired, account: tokenExpired, oldAddress: tokenExpired, newAddress: () => new AppError('email_taken') },
  );
  return changed;
};

/** POST /api/auth/verify: confirmEmailLink, answered with the account as the API shows it. */
export const verifyEmail = async (db: Db, input: VerifyInput, now: Date) => userView(await confirmEmailLink(db, input, now));

/**
 * Mails the signed-in user's address a new confirmation link: nothing (and nothing charged) when
 * it is confirmed already; else the user's account-mail bucket (429; not the address's, which
 * anonymous reset requests could keep empty), then one PutItem of a `verification` outbox message.
 * Throws `unauthorized`, `rate_limited`, `unavailable`.
 */
export const resendVerification = async (db: Db, claims: Claims, now: Date): Promise<Record<string, never>> => {
  const {
    items: [u],
  } = await readAsActor(db, claims, (userUuid) => [[db.entities.user, { userUuid }]] as const);
  if (!u) throw new AppError('unauthorized');
  if (u.emailConfirmedAt !== undefined) return {};
  await limitUserAccountMail(db, u.userUuid, now);
  await db.entities.outboxMessage.create(accountMessage('verification', { userUuid: u.userUuid, address: u.email }, now)).go();
  return {};
};
