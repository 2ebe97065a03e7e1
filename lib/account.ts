import type { Actor } from './auth/actor.ts';
import { hashPassword, verifyPassword } from './auth/passwords.ts';
import { COMMON_PASSWORD_MESSAGE, isCommonPassword } from './auth/common-passwords.ts';
import { checkPasswordAttempt, limitPasswordChange, limitRefresh, recordPasswordSuccess } from './auth/limits.ts';
import {
  type ClientInfo,
  type SessionItem,
  isLive,
  isRefreshable,
  openChild,
  readAsActor,
  sealChild,
  sessionBody,
  touchSession,
} from './auth/sessions.ts';
import { hashRefreshToken, newRefreshToken } from './auth/tokens.ts';
import { config } from './config.ts';
import { readTogether } from './db/batch-read.ts';
import { untilProcessed } from './db/pages.ts';
import type { Db } from './db/service.ts';
import { commit, isConditionFailure } from './db/transactions.ts';
import { AppError, notFound } from './errors.ts';
import type { RefreshInput, UserUpdateInput } from './schemas.ts';
import { isoMillis } from './time.ts';
import { type UserItem, userView } from './views.ts';

const expired = () => new AppError('unauthorized', 'The refresh token is invalid, expired or revoked; sign in again.');

/** The signed-in user's own record. Throws `unauthorized`. */
export const getCurrentUser = async (db: Db, actor: Actor) => {
  const [u] = await readAsActor(db, actor, [[db.entities.user, { userUuid: actor.userUuid }]] as const);
  if (!u) throw new AppError('unauthorized');
  return userView(u);
};

/** Ends a user's sessions (deleting a session revokes its access and refresh tokens). */
const endSessions = (db: Db, userUuid: string, sessionIds: string[]) =>
  untilProcessed(
    sessionIds.map((sessionId) => ({ userUuid, sessionId })),
    (keys) => db.entities.session.delete(keys).go(),
  );

/** Every session of a user, oldest first: a strongly consistent Query of the user's partition. */
const sessionsOf = async (db: Db, userUuid: string): Promise<SessionItem[]> =>
  (await db.entities.session.query.primary({ userUuid }).go({ pages: 'all', consistent: true })).data.sort((a, b) =>
    a.createdAt.localeCompare(b.createdAt),
  );

/**
 * Trades a refresh token for a new pair. The token is rotated: it stops working, and a retry
 * within the grace window gets the same new pair (two tabs refreshing at once stay signed in).
 * A rotated token presented after the window means it leaked: the whole session (every token
 * descended from that sign-in) ends. Throws `unauthorized`.
 */
export const refresh = async (db: Db, input: RefreshInput, client: ClientInfo, now: Date) => {
  await limitRefresh(db, client.ip, now);
  const parent = input.refresh_token;
  const tokenHash = hashRefreshToken(parent);
  let token = (await db.entities.refreshToken.get({ tokenHash }).go({ consistent: true })).data;
  if (!token) throw expired();
  const [s, u] = await readTogether(db, [
    [db.entities.session, { userUuid: token.userUuid, sessionId: token.sessionId }],
    [db.entities.user, { userUuid: token.userUuid }],
  ] as const);
  if (!isRefreshable(s, now.getTime()) || !u || s.userUuid !== token.userUuid) throw expired();

  const child = newRefreshToken();
  let lostRace = false;
  await commit(
    async () => {
      if (lostRace) token = (await db.entities.refreshToken.get({ tokenHash }).go({ consistent: true })).data;
      if (!token || token.status !== 'ACTIVE') return { canceled: false, data: [] };
      return db.transaction
        .write((tx) => [
          tx.refreshToken
            .patch({ tokenHash })
            .set({ status: 'ROTATED', rotatedAt: now.getTime(), childSeal: sealChild(parent, child) })
            .where((a, op) => op.eq(a.status, 'ACTIVE'))
            .commit(),
          tx.refreshToken
            .create({
              tokenHash: hashRefreshToken(child),
              sessionId: s.sessionId,
              userUuid: s.userUuid,
              status: 'ACTIVE',
              createdAt: isoMillis(now),
              expiresAt: s.expiresAt,
              ttl: s.expiresAt,
            })
            .commit(),
          touchSession(tx, s, now),
        ])
        .go();
    },
    // Another refresh of the same token won: read it again and answer as a retry would.
    (index) => {
      if (index !== 0) return expired();
      lostRace = true;
      return 'retry';
    },
  );
  if (token?.status === 'ACTIVE') return sessionBody(u, s, child, now);
  return answerRetry(db, parent, token, s, u, now);
};

/** A rotated token again: inside the grace window, the same pair as before; after it, the end of the session. */
const answerRetry = async (
  db: Db,
  parent: string,
  token: { rotatedAt?: number | undefined; childSeal?: string | undefined } | null,
  s: SessionItem,
  u: UserItem,
  now: Date,
) => {
  const { rotatedAt, childSeal } = token ?? {};
  if (rotatedAt !== undefined && childSeal && now.getTime() - rotatedAt <= config.refreshGraceSeconds * 1000) {
    return sessionBody(u, s, openChild(parent, childSeal), new Date(rotatedAt));
  }
  await endSessions(db, s.userUuid, [s.sessionId]);
  throw new AppError('unauthorized', 'This refresh token was already used; the session has been ended. Sign in again.');
};

/**
 * Ends the current session, or with `global` every session of the user. The delete of the current
 * session is conditional on it existing and being live: that is the session check. Throws `unauthorized`.
 */
export const signOut = async (db: Db, actor: Actor, scope: 'local' | 'global'): Promise<Record<string, never>> => {
  try {
    await db.entities.session
      .remove({ userUuid: actor.userUuid, sessionId: actor.sessionId })
      .where((a, op) => op.gt(a.expiresAt, Math.floor(Date.now() / 1000)))
      .go();
  } catch (error) {
    if (isConditionFailure(error)) throw new AppError('unauthorized');
    throw error;
  }
  actor.sessionChecked = true;
  if (scope === 'global') await endSessions(db, actor.userUuid, (await sessionsOf(db, actor.userUuid)).map((s) => s.sessionId));
  return {};
};

/** The user's live sessions, oldest first, the caller's marked `current`. */
export const listSessions = async (db: Db, actor: Actor, now: Date) => {
  await readAsActor(db, actor, [] as const);
  return (await sessionsOf(db, actor.userUuid))
    .filter((s) => isLive(s, now.getTime()))
    .map((s) => ({
      id: s.sessionId,
      createdAt: s.createdAt,
      lastUsedAt: s.lastUsedAt,
      userAgent: s.userAgent ?? null,
      ip: s.ip ?? null,
      current: s.sessionId === actor.sessionId,
    }));
};

/**
 * Ends one of the caller's sessions. Sessions live under their user's key, so another user's
 * session id is simply not found. Throws `unauthorized`, `not_found`.
 */
export const revokeSession = async (db: Db, actor: Actor, sessionId: string): Promise<Record<string, never>> => {
  if (sessionId === actor.sessionId) return signOut(db, actor, 'local');
  await readAsActor(db, actor, [] as const);
  try {
    await db.entities.session.remove({ userUuid: actor.userUuid, sessionId }).go();
  } catch (error) {
    if (isConditionFailure(error)) throw notFound('No session with that id.');
    throw error;
  }
  return {};
};

/**
 * Changes the caller's names, or password (with the current one). A new password ends every other
 * session of the user; the current one goes on. Throws `unauthorized`, `validation_failed`,
 * `rate_limited`.
 */
export const updateUser = async (db: Db, actor: Actor, input: UserUpdateInput, client: ClientInfo, now: Date) => {
  const [u] = await readAsActor(db, actor, [[db.entities.user, { userUuid: actor.userUuid }]] as const);
  if (!u) throw new AppError('unauthorized');
  const changes: Partial<UserItem> = { updatedAt: isoMillis(now) };
  if (input.firstName !== undefined) changes.firstName = input.firstName;
  if (input.lastName !== undefined) changes.lastName = input.lastName;
  if (input.password !== undefined) {
    if (isCommonPassword(input.password)) throw new AppError('validation_failed', undefined, { fields: { password: COMMON_PASSWORD_MESSAGE } });
    // The current password is guessed under the same limits as a sign-in of this account, and
    // the two hashes a change costs are capped per address.
    await limitPasswordChange(db, client.ip, now);
    const attempt = await checkPasswordAttempt(db, u.email, client.ip, now);
    if (!(await verifyPassword(u.passwordHash, input.currentPassword ?? ''))) {
      throw new AppError('validation_failed', undefined, { fields: { currentPassword: 'is not your current password' } });
    }
    await recordPasswordSuccess(db, attempt);
    changes.passwordHash = await hashPassword(input.password);
  }
  try {
    await db.entities.user
      .patch({ userUuid: u.userUuid })
      .set(changes)
      // A concurrent password change wins or loses whole: never two new passwords mixed.
      .where((a, op) => op.eq(a.passwordHash, u.passwordHash))
      .go();
  } catch (error) {
    if (isConditionFailure(error)) throw new AppError('conflict');
    throw error;
  }
  if (input.password !== undefined) {
    // Strongly consistent: every session committed before the new password is found and ended.
    const others = (await sessionsOf(db, u.userUuid)).filter((s) => s.sessionId !== actor.sessionId);
    await endSessions(db, u.userUuid, others.map((s) => s.sessionId));
  }
  return userView({ ...u, ...changes });
};
