import { epochOf, findToken, tokenExpired, useToken } from '#lib/auth/account-tokens.ts';
import type { ClientInfo } from '#lib/auth/session-items.ts';
import { newSession } from '#lib/auth/sessions.ts';
import type { SignInMethod } from '#lib/auth/signing.ts';
import { noteRequest } from '#lib/core/log.ts';
import { isoMillis, signInStamp } from '#lib/core/time.ts';
import type { UserItem } from '#lib/db/items.ts';
import type { Db } from '#lib/db/service.ts';
import { commit, named, write } from '#lib/db/transactions.ts';
import type { AuthSession } from '#lib/wire/responses.ts';
import { confirmEmailLink, tokenEpochIs } from './verification.ts';

/**
 * A session for `u`, who proved the account other than with its password: a mailed link used as
 * GoTrue uses it (`POST /auth/v1/verify` with `token_hash`: the link proves they read the
 * account's mail; `amr` `otp` or `recovery`), or a provider sign-in's code (`oauth`,
 * lib/identity/oauth/exchange.ts). Committed only while the account keeps the address it was read
 * with (else `token_expired`); nothing here ends the other sessions.
 */
export const openSession = async (
  db: Db,
  u: UserItem,
  client: ClientInfo,
  now: Date,
  method: Exclude<SignInMethod, 'password' | 'passkey'>,
): Promise<{ body: AuthSession; sessionId: string }> => {
  const lastSignInAt = signInStamp(now);
  let opened: Awaited<ReturnType<typeof newSession>> | undefined;
  await commit(
    async () => {
      const session = await newSession({ ...u, lastSignInAt }, client, now, method);
      opened = session;
      return write(db, (tx) => [
        named(
          'account',
          tx.user
            .patch({ userUuid: u.userUuid })
            .set({ lastSignInAt })
            .where((a, op) => op.eq(a.email, u.email))
            .commit(),
        ),
        named('session', ...session.writes(tx)),
      ]);
    },
    // The address changed since the link was used: the link's holder no longer proves the account's.
    { account: tokenExpired, session: () => 'retry' },
  );
  noteRequest({ userId: u.userUuid });
  const { body, sessionId } = opened as NonNullable<typeof opened>;
  return { body, sessionId };
};

/**
 * A confirmation link (sign-up, resend, e-mail change): confirms as POST /api/auth/verify does
 * (confirmEmailLink), then signs its holder in. Throws `token_expired`, `email_taken`.
 */
export const signInWithConfirmation = async (db: Db, token: string, client: ClientInfo, now: Date): Promise<AuthSession> =>
  (await openSession(db, await confirmEmailLink(db, { token }, now), client, now, 'otp')).body;

/**
 * A reset link: used up (one transaction with the new session, while the account still has the
 * address and the epoch the link was made under; it confirms the address, as a reset does), and
 * its holder signed in to choose a new password (PUT /auth/v1/user takes it from such a fresh
 * session without the old one). Throws `token_expired`.
 */
export const signInWithRecovery = async (db: Db, token: string, client: ClientInfo, now: Date): Promise<AuthSession> => {
  const item = await findToken(db, token, ['recovery'], now);
  if (item.userUuid === undefined) throw tokenExpired();
  const u = (await db.entities.user.get({ userUuid: item.userUuid }).go({ consistent: true })).data;
  if (!u || u.email !== item.email || epochOf(u) !== (item.epoch ?? 0)) throw tokenExpired();
  const stamp = isoMillis(now);
  const lastSignInAt = signInStamp(now);
  const signedIn: UserItem = { ...u, emailConfirmedAt: u.emailConfirmedAt ?? stamp, lastSignInAt };
  let opened: Awaited<ReturnType<typeof newSession>> | undefined;
  await commit(
    async () => {
      const session = await newSession(signedIn, client, now, 'recovery');
      opened = session;
      return write(db, (tx) => [
        named('token', useToken(tx, item, now)),
        named(
          'account',
          tx.user
            .patch({ userUuid: u.userUuid })
            .set({ lastSignInAt })
            .data((a, op) => {
              op.ifNotExists(a.emailConfirmedAt, stamp);
            })
            .where((a, op) => `${op.eq(a.email, item.email)} AND ${tokenEpochIs(a.tokenEpoch, op, item.epoch)}`)
            .commit(),
        ),
        named('session', ...session.writes(tx)),
      ]);
    },
    { token: tokenExpired, account: tokenExpired, session: () => 'retry' },
  );
  noteRequest({ userId: u.userUuid });
  return (opened as NonNullable<typeof opened>).body;
};
