import { hkdfSync, randomUUIDv7 } from 'node:crypto';
import { openBytes, sealBytes } from '#lib/core/aead.ts';
import { config } from '#lib/core/config.ts';
import { addDays, epochSeconds, isoMillis } from '#lib/core/time.ts';
import type { SecondFactorMethod } from '#lib/db/entities/users.ts';
import type { UserItem } from '#lib/db/items.ts';
import type { Tx } from '#lib/db/service.ts';
import type { AuthSession } from '#lib/wire/responses.ts';
import { userView } from '#lib/wire/views.ts';
import { hashOpaqueToken, newOpaqueToken } from './opaque-tokens.ts';
import type { ClientInfo, SessionItem } from './session-items.ts';
import { type SignInMethod, signAccessToken } from './signing.ts';

/** The deletion time: the earlier of the absolute end and the idle end. */
const ttlOf = (expiresAt: number, lastUsed: Date): number => Math.min(expiresAt, epochSeconds(addDays(lastUsed, config.refreshIdleDays)));

/**
 * The `data.session` body. Signing the same claims with the same Ed25519 key gives the same token,
 * so a refresh retried inside the grace window answers exactly the pair it answered first: every
 * claim comes from the stored session (its `createdAt` is the sign-in time in `amr`) or `issuedAt`.
 */
export const sessionBody = async (
  u: UserItem,
  s: {
    sessionId: string;
    expiresAt: number;
    createdAt: string;
    method?: SignInMethod | undefined;
    aal?: 'aal2' | undefined;
    secondMethod?: SecondFactorMethod | undefined;
    secondAt?: number | undefined;
  },
  refresh: string,
  issuedAt: Date,
): Promise<AuthSession> => {
  // An access token never outlives its session, even for verifiers that never ask Roster.
  const access = await signAccessToken({ userUuid: u.userUuid, email: u.email, sessionId: s.sessionId }, issuedAt, {
    notAfter: s.expiresAt,
    authenticatedAt: new Date(s.createdAt),
    method: s.method ?? 'password',
    second: s.aal === 'aal2' && s.secondMethod && s.secondAt !== undefined ? { method: s.secondMethod, at: s.secondAt } : undefined,
  });
  return {
    session: {
      access_token: access.token,
      token_type: 'bearer',
      expires_in: config.accessTokenSeconds,
      expires_at: access.expiresAt,
      refresh_token: refresh,
      user: userView(u),
    },
  };
};

/**
 * A new session: its items (written by the caller's transaction, with whatever else that
 * transaction needs) and the `data.session` body to answer with once they are written. `second`:
 * the sign-in proved a second factor too (a passkey with user verification), so it starts at aal2.
 */
export const newSession = async (
  u: UserItem,
  client: ClientInfo,
  now: Date,
  method: SignInMethod = 'password',
  second?: SecondFactorMethod,
) => {
  // Time-ordered (UUIDv7): the user's partition sorts by creation, so it pages oldest first.
  const sessionId = randomUUIDv7();
  const refresh = newOpaqueToken();
  const expiresAt = epochSeconds(addDays(now, config.refreshTokenDays));
  const createdAt = isoMillis(now);
  const ttl = ttlOf(expiresAt, now);
  const raised = second ? { aal: 'aal2' as const, secondMethod: second, secondAt: epochSeconds(now) } : {};
  const writes = (tx: Tx) => [
    tx.session
      .create({
        sessionId,
        userUuid: u.userUuid,
        createdAt,
        lastUsedAt: createdAt,
        expiresAt,
        ttl,
        ip: client.ip,
        userAgent: client.userAgent?.slice(0, 512),
        ...(method === 'password' ? {} : { method }),
        ...raised,
      })
      .commit(),
    tx.refreshToken
      .create({ tokenHash: hashOpaqueToken(refresh), sessionId, userUuid: u.userUuid, status: 'ACTIVE', createdAt, expiresAt, ttl })
      .commit(),
  ];
  return { sessionId, writes, body: await sessionBody(u, { sessionId, expiresAt, createdAt, method, ...raised }, refresh, now) };
};

/**
 * The successor of a refresh token is stored sealed with AES-256-GCM under a key derived from the
 * token itself: only someone presenting that token can open it (the table holds just its hash).
 */
const sealKey = (parent: string): Buffer =>
  Buffer.from(hkdfSync('sha256', Buffer.from(parent, 'utf8'), Buffer.alloc(0), 'roster refresh successor', 32));

export const sealChild = (parent: string, child: string): string =>
  sealBytes(sealKey(parent), Buffer.from(child, 'utf8')).toString('base64url');

export const openChild = (parent: string, seal: string): string =>
  openBytes(sealKey(parent), Buffer.from(seal, 'base64url')).toString('utf8');

/**
 * Items to write when a session is used (refreshed): its idle timeout starts again, and its
 * rotation bucket's `refreshTat` becomes `tat` (computed from the value read, `s.refreshTat`, which
 * the condition requires to be unchanged: the count costs no request of its own).
 */
export const touchSession = (tx: Tx, s: SessionItem, now: Date, tat: number) =>
  tx.session
    .patch({ userUuid: s.userUuid, sessionId: s.sessionId })
    .set({ lastUsedAt: isoMillis(now), ttl: ttlOf(s.expiresAt, now), refreshTat: tat })
    .where(
      (a, op) =>
        `${op.gt(a.expiresAt, epochSeconds(now))} AND ${s.refreshTat === undefined ? op.notExists(a.refreshTat) : op.eq(a.refreshTat, s.refreshTat)} AND ${
          // A step-up since the read retires the token being refreshed (raiseSession).
          s.refreshFrom === undefined ? op.notExists(a.refreshFrom) : op.eq(a.refreshFrom, s.refreshFrom)
        }`,
    )
    .commit();

/** A new active refresh token of an existing session (a rotation's successor, a step-up's), living as long as the session. */
export const sessionRefreshToken = (tx: Tx, token: string, s: Pick<SessionItem, 'sessionId' | 'userUuid' | 'expiresAt'>, now: Date) =>
  tx.refreshToken
    .create({
      tokenHash: hashOpaqueToken(token),
      sessionId: s.sessionId,
      userUuid: s.userUuid,
      status: 'ACTIVE',
      createdAt: isoMillis(now),
      expiresAt: s.expiresAt,
      ttl: s.expiresAt,
    })
    .commit();

/**
 * Raises session `s` to aal2, a second factor proven by `method` at `now`: the items to write in
 * the caller's transaction (the session, conditional on it being live, and a new refresh token)
 * and the body to answer once they are written. The session's older refresh tokens stop working
 * (`refreshFrom`): a refresh token taken from the aal1 session must not refresh into aal2. The new
 * one keeps aal2 through its rotations.
 */
export const raiseSession = async (u: UserItem, s: SessionItem, method: SecondFactorMethod, now: Date) => {
  const refresh = newOpaqueToken();
  const secondAt = epochSeconds(now);
  const writes = (tx: Tx) => [
    tx.session
      .patch({ userUuid: s.userUuid, sessionId: s.sessionId })
      .set({ aal: 'aal2', secondMethod: method, secondAt, refreshFrom: isoMillis(now) })
      .where((a, op) => op.gt(a.expiresAt, secondAt))
      .commit(),
    sessionRefreshToken(tx, refresh, s, now),
  ];
  return { writes, body: await sessionBody(u, { ...s, aal: 'aal2', secondMethod: method, secondAt }, refresh, now) };
};
