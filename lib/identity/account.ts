import { COMMON_PASSWORD_MESSAGE, isCommonPassword } from '#lib/auth/common-passwords.ts';
import { hashPassword, verifyPassword } from '#lib/auth/passwords.ts';
import {
  type Claims,
  type ClientInfo,
  endSessionsOf,
  isLive,
  namesSession,
  readAsActor,
  requireAal2,
  signOutAs,
} from '#lib/auth/session-items.ts';
import { config } from '#lib/core/config.ts';
import { AppError, notFound } from '#lib/core/errors.ts';
import { Page, type PageRequest } from '#lib/core/pagination.ts';
import { isoMillis } from '#lib/core/time.ts';
import { MAX_METADATA_BYTES, MAX_METADATA_KEYS, withinMetadataBounds } from '#lib/core/user-metadata.ts';
import type { UserItem } from '#lib/db/items.ts';
import { cursorAfter, queryPage } from '#lib/db/pages.ts';
import type { Db } from '#lib/db/service.ts';
import { commit, isConditionFailure, named, write } from '#lib/db/transactions.ts';
import { limitUserAccountMail } from '#lib/limits/mail-allowances.ts';
import { checkPasswordAttempt, limitPasswordChange, recordPasswordSuccess } from '#lib/limits/password-attempts.ts';
import { type BucketToken, giveBack } from '#lib/limits/token-bucket.ts';
import type { SessionInfo } from '#lib/wire/responses.ts';
import type { UserUpdateInput } from '#lib/wire/schemas.ts';
import { userView } from '#lib/wire/views.ts';
import { accountMessage } from './verification.ts';

/**
 * Whether the account has a verified second factor (docs/mfa.md): then its address and existence
 * change only from aal2, and its password too but through a reset link (which never raises the level).
 */
export const hasVerifiedFactor = (u: UserItem): boolean => (u.factors ?? []).some((f) => f.status === 'verified');

/** GoTrue's words for the same refusal. */
export const SECOND_FACTOR_FIRST =
  'This account has a second factor: the password, the e-mail address and the account itself change only from a session that proved it (a new password also through a reset link). Verify a code first.';

/** The signed-in user's own record. Throws `unauthorized`. */
export const getCurrentUser = async (db: Db, claims: Claims) => {
  const {
    items: [u],
  } = await readAsActor(db, claims, (userUuid) => [[db.entities.user, { userUuid }]] as const);
  if (!u) throw new AppError('unauthorized');
  return userView(u);
};

/**
 * Ends the current session (`local`), every session of the user (`global`), or every session but
 * the current one (`others`, GoTrue's third scope). Ending the current session is a delete
 * conditional on it existing and being live: that is the session check (signOutAs); `others`
 * checks it with a read instead. Throws `unauthorized`.
 */
export const signOut = async (db: Db, claims: Claims, scope: 'local' | 'global' | 'others'): Promise<Record<string, never>> => {
  if (scope === 'others') {
    const { actor } = await readAsActor(db, claims, [] as const);
    await endSessionsOf(db, actor.userUuid, actor.sessionId);
    return {};
  }
  const actor = await signOutAs(db, claims);
  if (scope === 'global') await endSessionsOf(db, actor.userUuid);
  return {};
};

/**
 * One page of the user's live sessions, oldest first (by id: UUIDv7, time-ordered), the caller's
 * marked `current`: the caller's session check, then one strongly consistent Query of the user's
 * partition. A session past its absolute end that TTL has not deleted yet is left out, so a page
 * may hold fewer than `limit`; its cursor still goes on after it.
 */
export const listSessions = async (db: Db, claims: Claims, now: Date, request: PageRequest): Promise<Page<SessionInfo>> => {
  const { actor } = await readAsActor(db, claims, [] as const);
  const page = await queryPage(
    db,
    `sessions ${actor.userUuid}`,
    (options) => db.entities.session.query.primary({ userUuid: actor.userUuid }).go({ ...options, consistent: true }),
    request,
    cursorAfter(db.entities.session, 'primary'),
  );
  return new Page(
    page.items
      .filter((s) => isLive(s, now.getTime()))
      .map((s) => ({
        id: s.sessionId,
        createdAt: s.createdAt,
        lastUsedAt: s.lastUsedAt,
        userAgent: s.userAgent ?? null,
        ip: s.ip ?? null,
        current: s.sessionId === actor.sessionId,
      })),
    page.cursor,
  );
};

/**
 * Ends one of the caller's sessions. Sessions live under their user's key, so another user's
 * session id is simply not found. Throws `unauthorized`, `not_found`.
 */
export const revokeSession = async (db: Db, claims: Claims, sessionId: string): Promise<Record<string, never>> => {
  if (namesSession(claims, sessionId)) return signOut(db, claims, 'local');
  const { actor } = await readAsActor(db, claims, [] as const);
  try {
    await db.entities.session.remove({ userUuid: actor.userUuid, sessionId }).go();
  } catch (error) {
    if (isConditionFailure(error)) throw notFound('No session with that id.');
    throw error;
  }
  return {};
};

/**
 * Checks the caller's current password for a change that needs it, under the same limits as a
 * sign-in of this account; the hashes a change costs are capped per user (not per address: a
 * NAT's users all may). Throws `rate_limited`, `validation_failed` on `currentPassword`.
 */
const checkCurrentPassword = async (db: Db, u: UserItem, currentPassword: string | undefined, client: ClientInfo, now: Date) => {
  await limitPasswordChange(db, u.userUuid, now);
  const attempt = await checkPasswordAttempt(db, u.email, client.ip, now);
  if (!(await verifyPassword(u.passwordHash, currentPassword ?? ''))) {
    throw new AppError('validation_failed', undefined, { fields: { currentPassword: 'is not your current password' } });
  }
  await recordPasswordSuccess(db, attempt);
};

/**
 * Changes the caller's names, password or e-mail address (the last two with the current
 * password). A new password ends every other session of the user (the current one goes on) and
 * bumps `tokenEpoch`, so every link mailed before it (a reset, a confirmation) stops working.
 * A new address is not the account's yet: it becomes the pending `newEmail`, and the same
 * transaction asks for a confirmation link to it and a notice to the current address; the link
 * (POST /api/auth/verify) makes the change. An address held by another account is refused here
 * (409) as a courtesy; the claim in the link's transaction is what keeps addresses unique.
 * `recentSignInMs`: a password or address change needs no current password from a session opened
 * at most that long ago (lib/gotrue/). `metadata` merges into the user's own keys.
 * Throws `unauthorized`, `validation_failed`, `rate_limited`, `email_taken`, `conflict`.
 */
export const updateUser = async (
  db: Db,
  claims: Claims,
  input: UserUpdateInput & { metadata?: Record<string, unknown> },
  client: ClientInfo,
  now: Date,
  { recentSignInMs }: { recentSignInMs?: number } = {},
) => {
  const {
    actor,
    session,
    items: [u],
  } = await readAsActor(db, claims, (userUuid) => [[db.entities.user, { userUuid }]] as const);
  if (!u) throw new AppError('unauthorized');
  // Without the current password only from a session opened moments ago (GoTrue's clients: a
  // sign-up, a sign-in or a reset link just used), never from an old one a thief may hold.
  const reauthenticated =
    input.currentPassword === undefined && recentSignInMs !== undefined && now.getTime() - Date.parse(session.createdAt) <= recentSignInMs;
  // An account with a second factor: its password and address change only from aal2, but for a new
  // password right after a reset link (auth-js's reset flow), which may set one as POST
  // /api/auth/reset does: the link proves the mailbox, and the new session is aal1 all the same.
  const afterResetLink = reauthenticated && session.method === 'recovery' && input.email === undefined;
  if ((input.password !== undefined || input.email !== undefined) && hasVerifiedFactor(u) && !afterResetLink)
    requireAal2(actor, SECOND_FACTOR_FIRST);
  if (input.email !== undefined && input.email === u.email) {
    throw new AppError('validation_failed', undefined, { fields: { email: 'is already your address' } });
  }
  if (input.password !== undefined && isCommonPassword(input.password)) {
    throw new AppError('validation_failed', undefined, { fields: { password: COMMON_PASSWORD_MESSAGE } });
  }
  const changes: Partial<UserItem> = { updatedAt: isoMillis(now) };
  if (input.firstName !== undefined) changes.firstName = input.firstName;
  if (input.lastName !== undefined) changes.lastName = input.lastName;
  if (input.metadata !== undefined) {
    // The stored metadata is JSON the API wrote, typed `any` by ElectroDB; merged, it keeps the bounds of one request's.
    const merged = { ...(u.metadata as Record<string, unknown> | undefined), ...input.metadata };
    if (!withinMetadataBounds(merged))
      throw new AppError('validation_failed', undefined, {
        fields: { data: `would hold more than ${MAX_METADATA_KEYS} keys or ${MAX_METADATA_BYTES} bytes of JSON with what is kept` },
      });
    changes.metadata = merged;
  }
  if ((input.password !== undefined || input.email !== undefined) && !reauthenticated) {
    if (input.currentPassword === undefined)
      throw new AppError('validation_failed', undefined, {
        fields: { currentPassword: 'is required: this session was not opened moments ago' },
      });
    await checkCurrentPassword(db, u, input.currentPassword, client, now);
  }
  const newEmail = input.email;
  let mail: BucketToken[] | undefined;
  let inUse = false;
  if (newEmail !== undefined) {
    // Concealing accounts (docs/accounts.md), an address in use is answered as a free one: its owner is told instead.
    inUse = (await db.entities.emailClaim.get({ email: newEmail }).go({ consistent: true })).data !== null;
    if (inUse && !config.concealAccounts) throw new AppError('email_taken');
    // The user's account-mail allowance: one account must not mail many addresses. What the new
    // address may be sent is the mailer's to charge (lib/limits/recipient-mail.ts).
    mail = [await limitUserAccountMail(db, u.userUuid, now)];
    changes.newEmail = newEmail;
  }
  if (input.password !== undefined) {
    changes.passwordHash = await hashPassword(input.password);
    // Set from a reset link's own session, it was set through the mailbox (docs/sso.md, "Linking").
    changes.passwordFromMailbox = afterResetLink;
  }
  // A password change voids the links mailed before it.
  const epochBump = input.password !== undefined ? { tokenEpoch: 1 } : {};

  // Both conditioned on the password and address read: a concurrent change of either wins or loses whole.
  if (newEmail === undefined) {
    try {
      const patch = db.entities.user.patch({ userUuid: u.userUuid }).set(changes).add(epochBump);
      // A password change also ends a pending e-mail change (its link died with the epoch).
      await (input.password !== undefined ? patch.remove(['newEmail']) : patch)
        .where((a, op) => `${op.eq(a.passwordHash, u.passwordHash)} AND ${op.eq(a.email, u.email)}`)
        .go();
    } catch (error) {
      if (isConditionFailure(error)) throw new AppError('conflict');
      throw error;
    }
  } else {
    try {
      await commit(
        () =>
          write(db, (tx) => [
            named(
              'account',
              tx.user
                .patch({ userUuid: u.userUuid })
                .set(changes)
                .add(epochBump)
                .where((a, op) => `${op.eq(a.passwordHash, u.passwordHash)} AND ${op.eq(a.email, u.email)}`)
                .commit(),
            ),
            named(
              'mail',
              inUse
                ? tx.outboxMessage.create(accountMessage('address_in_use', { address: newEmail }, now)).commit()
                : tx.outboxMessage.create(accountMessage('email_change', { userUuid: u.userUuid, address: newEmail }, now)).commit(),
              tx.outboxMessage.create(accountMessage('email_change_notice', { userUuid: u.userUuid, address: u.email }, now)).commit(),
            ),
          ]),
        // The user changed meanwhile; a message id clash is worth another try.
        { account: () => new AppError('conflict'), mail: () => 'retry' },
      );
    } catch (error) {
      // Refused whole (nothing written, nothing mailed): the address's allowance is not spent.
      if (error instanceof AppError && mail) await Promise.all(mail.map((token) => giveBack(db, token)));
      throw error;
    }
  }
  if (input.password !== undefined) {
    // Strongly consistent: every session committed before the new password is found and ended.
    await endSessionsOf(db, u.userUuid, actor.sessionId);
  }
  return userView({ ...u, ...changes });
};
