import { randomUUID } from 'node:crypto';
import { type AccountTokenItem, findToken, useToken } from '#lib/auth/account-tokens.ts';
import { COMMON_PASSWORD_MESSAGE, isCommonPassword } from '#lib/auth/common-passwords.ts';
import { hashPassword, spendVerifyTime, verifyPassword } from '#lib/auth/passwords.ts';
import { type ClientInfo, sessionsForCap, trimSessions } from '#lib/auth/session-items.ts';
import { newSession } from '#lib/auth/sessions.ts';
import { config } from '#lib/core/config.ts';
import { AppError } from '#lib/core/errors.ts';
import { newId } from '#lib/core/ids.ts';
import { noteRequest } from '#lib/core/log.ts';
import { EVENT_METRICS } from '#lib/core/metric-names.ts';
import { recordEvent } from '#lib/core/metrics.ts';
import { isoMillis, signInStamp } from '#lib/core/time.ts';
import type { UserItem } from '#lib/db/items.ts';
import type { Db } from '#lib/db/service.ts';
import { commit, named, write } from '#lib/db/transactions.ts';
import { checkPasswordAttempt, recordPasswordSuccess } from '#lib/limits/password-attempts.ts';
import { limitSignIn, limitSignUp } from '#lib/limits/source-network.ts';
import { giveBack } from '#lib/limits/token-bucket.ts';
import type { AuthSession, User } from '#lib/wire/responses.ts';
import type { SignInInput, SignUpInput } from '#lib/wire/schemas.ts';
import { userView } from '#lib/wire/views.ts';
import { accountMessage } from './verification.ts';

/**
 * The live `invitation` token of the sign-up's address, if `inviteToken` is one: signing up from
 * an invitation e-mail proves the address. Anything else is no error, just an ordinary sign-up.
 */
const invitationFor = async (db: Db, input: SignUpInput, now: Date): Promise<AccountTokenItem | undefined> => {
  if (input.inviteToken === undefined) return undefined;
  const item = await findToken(db, input.inviteToken, ['invitation'], now).catch((error: unknown) => {
    if (error instanceof AppError && error.code === 'token_expired') return undefined;
    throw error;
  });
  return item?.email === input.email ? item : undefined;
};

/** Sign-up's answer when CONCEAL_ACCOUNTS is on: no session, and a user whose id tells nothing (see signUp). */
export interface ConcealedSignUp {
  session: null;
  user: User;
}

/**
 * Creates an account and its first session in one transaction: the e-mail claim makes the
 * address unique, the id claim the integer id. The same transaction writes the `verification`
 * outbox message, or, with the invitation token of the address (invitationFor), creates the
 * account confirmed and uses the token up instead. A common password is refused like any invalid
 * field, before the source IP's sign-up bucket is charged; that bucket is charged before hashing.
 *
 * With CONCEAL_ACCOUNTS (docs/accounts.md, "Concealing accounts"), a sign-up without an invitation
 * token opens no session and answers `{ session: null, user }`, for a new address and for one an
 * account holds alike: the latter writes an `address_in_use` message to that account's address
 * instead of an account, and its `user` is the one that would have been made (a fresh id). Both
 * hash, both run the transaction (the second fails on the e-mail claim), then both put their
 * message: the same requests, in the same order.
 * Throws `validation_failed`, `rate_limited`, `email_taken`.
 */
export const signUp = async (
  db: Db,
  input: SignUpInput & { metadata?: Record<string, unknown> },
  client: ClientInfo,
  now: Date,
): Promise<AuthSession | ConcealedSignUp> => {
  if (isCommonPassword(input.password))
    throw new AppError('validation_failed', undefined, { fields: { password: COMMON_PASSWORD_MESSAGE } });
  await limitSignUp(db, client.ip, now);
  // The confirmation e-mail counts against the address's allowance like any other account mail
  // (else signing up, deleting and signing up again would mail an address without limit); the
  // mailer charges it as it sends (lib/limits/recipient-mail.ts).
  const [passwordHash, invitation] = await Promise.all([hashPassword(input.password), invitationFor(db, input, now)]);
  let fromInvite = invitation;
  let taken = false;
  const userUuid = randomUUID();
  let u: UserItem | undefined;
  let answer: AuthSession | undefined;
  const concealed = () => config.concealAccounts && !fromInvite;
  await commit(
    async () => {
      u = {
        userUuid,
        userId: newId(now),
        email: input.email,
        firstName: input.firstName,
        lastName: input.lastName,
        ...(input.metadata && Object.keys(input.metadata).length > 0 ? { metadata: input.metadata } : {}),
        passwordHash,
        ...(fromInvite ? { emailConfirmedAt: isoMillis(now), passwordFromMailbox: true } : {}),
        createdAt: isoMillis(now),
        updatedAt: isoMillis(now),
        ...(concealed() ? {} : { lastSignInAt: signInStamp(now) }),
      };
      const created = u;
      const session = concealed() ? undefined : await newSession(created, client, now);
      answer = session?.body;
      return write(db, (tx) => [
        named('email', tx.emailClaim.create({ email: created.email, userUuid }).commit()),
        // The token can have been used up meanwhile (another tab's sign-up lost to email_taken, or expired).
        // Concealing, the message is put after the transaction, as for an address in use.
        fromInvite
          ? named('invitation', useToken(tx, fromInvite, now))
          : named(
              'mail',
              ...(concealed()
                ? []
                : [tx.outboxMessage.create(accountMessage('verification', { userUuid, address: created.email }, now)).commit()]),
            ),
        named('userId', tx.idClaim.create({ kind: 'user', id: created.userId }).commit()),
        named('user', tx.user.create(created).commit()),
        named('session', ...(session ? session.writes(tx) : [])),
      ]);
    },
    {
      email: () => {
        if (!concealed()) return new AppError('email_taken');
        taken = true;
        return 'done';
      },
      // A token that no longer fits is ignored, as one that never did: an ordinary sign-up.
      invitation: () => {
        fromInvite = undefined;
        return 'retry';
      },
      // A fresh id or message id clashed: try again with new ones.
      otherwise: () => 'retry',
    },
  );
  if (answer) {
    recordEvent(EVENT_METRICS.signUps);
    noteRequest({ userId: userUuid });
    return answer;
  }
  // Concealed: one PutItem either way, the link to the new account's address or the notice to the
  // owner of an address in use (the asker is not told which).
  const message = taken
    ? accountMessage('address_in_use', { address: input.email }, now)
    : accountMessage('verification', { userUuid, address: input.email }, now);
  await db.entities.outboxMessage.create(message).go();
  if (!taken) recordEvent(EVENT_METRICS.signUps);
  return { session: null, user: userView(u as UserItem) };
};

/**
 * Checks the password and opens a session. An unknown e-mail spends the same hashing time as a
 * wrong password and gets the same answer. The source IP's bucket and the account's attempt limits
 * (keyed by e-mail, known or not: the back-off per source network, the hourly cap across all of
 * them) are checked before any password is: a limited caller gets 429 whatever the password.
 * The address's token is given back when the password was right or when the account limits
 * refused (no password checked): the address bucket counts guesses, not the people behind it.
 * Opening a session past the user's cap ends the oldest ones. Throws `rate_limited`,
 * `invalid_credentials`.
 */
const attemptSignIn = async (db: Db, input: SignInInput, client: ClientInfo, now: Date) => {
  // The address bucket first: a caller it refuses must not count against the account.
  const token = await limitSignIn(db, client.ip, now);
  const [attempt, claim] = await Promise.all([
    checkPasswordAttempt(db, input.email, client.ip, now).catch(async (error: unknown) => {
      await giveBack(db, token);
      throw error;
    }),
    db.entities.emailClaim
      .get({ email: input.email })
      .go({ consistent: true })
      .then(({ data }) => data),
  ]);
  // An unknown e-mail still reads a user (the nil UUID, never assigned): the same requests, the same time.
  const userUuid = claim?.userUuid ?? '00000000-0000-0000-0000-000000000000';
  const u = (await db.entities.user.get({ userUuid }).go({ consistent: true })).data;
  // An account without a password (made by a provider) spends the same time as an unknown address.
  if (!u || u.passwordHash === '') {
    await spendVerifyTime(input.password);
    throw new AppError('invalid_credentials');
  }
  if (!(await verifyPassword(u.passwordHash, input.password))) throw new AppError('invalid_credentials');
  // Concealing accounts, an unconfirmed one signs in no one: else signing up an address and then
  // signing in with the same password would tell whether the sign-up made the account.
  if (config.concealAccounts && u.emailConfirmedAt === undefined) throw new AppError('invalid_credentials');

  const signedIn: UserItem = { ...u, lastSignInAt: signInStamp(now) };
  const session = await newSession(signedIn, client, now);
  // The counters reset beside the session's transaction rather than inside it: an item in a
  // transaction costs twice the write units, and the password was right either way. The user's
  // other sessions are read meanwhile (eventually consistent, at most about the cap) for the cap.
  const [, , others] = await Promise.all([
    recordPasswordSuccess(db, attempt),
    giveBack(db, token),
    sessionsForCap(db, u.userUuid),
    commit(
      () =>
        write(db, (tx) => [
          // Only while the password checked is still the stored one: a sign-in racing a password
          // change never opens a session with the old password.
          named(
            'password',
            tx.user
              .patch({ userUuid: u.userUuid })
              .set({ lastSignInAt: signedIn.lastSignInAt })
              .where((a, op) => op.eq(a.passwordHash, u.passwordHash))
              .commit(),
          ),
          named('session', ...session.writes(tx)),
        ]),
      // Only the password has a condition that can fail (the user exists with it); session ids are fresh UUIDs.
      { otherwise: () => new AppError('invalid_credentials') },
    ),
  ]);
  await trimSessions(db, u.userUuid, others, session.sessionId);
  return session.body;
};

/** A sign-in (see attemptSignIn), counted by outcome: a session, wrong credentials, or refused by a limit. */
export const signIn = async (db: Db, input: SignInInput, client: ClientInfo, now: Date) => {
  try {
    const body = await attemptSignIn(db, input, client, now);
    recordEvent(EVENT_METRICS.signInSucceeded);
    noteRequest({ userId: body.session.user.id });
    return body;
  } catch (error) {
    if (error instanceof AppError && error.code === 'invalid_credentials') recordEvent(EVENT_METRICS.signInFailed);
    if (error instanceof AppError && error.code === 'rate_limited') recordEvent(EVENT_METRICS.signInLimited);
    throw error;
  }
};
