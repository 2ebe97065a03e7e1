import { epochOf, findToken, tokenExpired, useToken } from '#lib/auth/account-tokens.ts';
import { COMMON_PASSWORD_MESSAGE, isCommonPassword } from '#lib/auth/common-passwords.ts';
import { hashPassword } from '#lib/auth/passwords.ts';
import { type ClientInfo, endSessionsOf } from '#lib/auth/session-items.ts';
import { newSession } from '#lib/auth/sessions.ts';
import { AppError } from '#lib/core/errors.ts';
import { noteRequest } from '#lib/core/log.ts';
import { isoMillis, signInStamp } from '#lib/core/time.ts';
import type { UserItem } from '#lib/db/items.ts';
import type { Db } from '#lib/db/service.ts';
import { commit, named, write } from '#lib/db/transactions.ts';
import type { ResetInput } from '#lib/wire/schemas.ts';
import { tokenEpochIs } from './verification.ts';

/**
 * Sets a new password with a `recovery` token and answers a new session, like sign-in. Only a
 * live token gets as far as the hash (anything else is 410 after one GetItem). One transaction
 * uses the token up and changes the user only while the account still has the address and the
 * `tokenEpoch` the token was issued under (bumping it: every other mailed link of the account dies
 * with it), and writes the new session. Then every other session is ended (a strongly consistent
 * Query): a sign-in with the old password either committed before (found and ended) or fails its
 * `passwordHash` condition. Throws `token_expired`, `validation_failed`.
 */
export const resetPassword = async (db: Db, input: ResetInput, client: ClientInfo, now: Date) => {
  const item = await findToken(db, input.token, ['recovery'], now);
  if (item.userUuid === undefined) throw tokenExpired();
  const u = (await db.entities.user.get({ userUuid: item.userUuid }).go({ consistent: true })).data;
  // The transaction would refuse these too; refusing here spares the hash.
  if (!u || u.email !== item.email || epochOf(u) !== (item.epoch ?? 0)) throw tokenExpired();
  if (isCommonPassword(input.password))
    throw new AppError('validation_failed', undefined, { fields: { password: COMMON_PASSWORD_MESSAGE } });
  const passwordHash = await hashPassword(input.password);

  const stamp = isoMillis(now);
  // Like sign-in's `last_sign_in_at`: microseconds from the monotonic clock.
  const reset: UserItem = {
    ...u,
    passwordHash,
    emailConfirmedAt: u.emailConfirmedAt ?? stamp,
    updatedAt: stamp,
    lastSignInAt: signInStamp(now),
    tokenEpoch: epochOf(u) + 1,
  };
  let opened: Awaited<ReturnType<typeof newSession>> | undefined;
  await commit(
    async () => {
      const session = await newSession(reset, client, now);
      opened = session;
      return write(db, (tx) => [
        named('token', useToken(tx, item, now)),
        named(
          'account',
          tx.user
            .patch({ userUuid: u.userUuid })
            .set({ passwordHash, passwordFromMailbox: true, updatedAt: stamp, lastSignInAt: reset.lastSignInAt })
            .add({ tokenEpoch: 1 })
            // A pending e-mail change ends too: its link died with the epoch, and the mailer must
            // not make it a new one (a retried send).
            .remove(['newEmail'])
            // A confirmation that landed since the read keeps its own time.
            .data((a, op) => {
              op.ifNotExists(a.emailConfirmedAt, stamp);
            })
            .where((a, op) => `${op.eq(a.email, item.email)} AND ${tokenEpochIs(a.tokenEpoch, op, item.epoch)}`)
            .commit(),
        ),
        named('session', ...session.writes(tx)),
      ]);
    },
    // The token or the account: used meanwhile (a second reset), or the account changed. Session
    // ids are fresh UUIDs, so a session's failure is a clash worth another try.
    { token: tokenExpired, account: tokenExpired, session: () => 'retry' },
  );
  const session = opened as NonNullable<typeof opened>;
  await endSessionsOf(db, u.userUuid, session.sessionId);
  noteRequest({ userId: u.userUuid });
  return session.body;
};
