import { randomUUID } from 'node:crypto';
import { config } from '../config.ts';
import type { Tx } from '../db/service.ts';
import { addDays, epochSeconds, isoMillis } from '../time.ts';
import { type UserItem, userView } from '../views.ts';
import { hashRefreshToken, newRefreshToken, signAccessToken } from './tokens.ts';

/** Where a sign-in came from, as API Gateway saw it (never a client-supplied header). */
export interface ClientInfo {
  ip: string;
  userAgent: string | undefined;
}

/**
 * A new session: its items (written by the caller's transaction, with whatever else that
 * transaction needs) and the `data.session` body to answer with once they are written.
 */
export const newSession = async (u: UserItem, client: ClientInfo, now: Date) => {
  const sessionId = randomUUID();
  const refresh = newRefreshToken();
  const expiresAt = epochSeconds(addDays(now, config.refreshTokenDays));
  const access = await signAccessToken({ userUuid: u.userUuid, email: u.email, sessionId }, now);
  const createdAt = isoMillis(now);
  const writes = (tx: Tx) => [
    tx.session
      .create({
        sessionId,
        userUuid: u.userUuid,
        createdAt,
        lastUsedAt: createdAt,
        expiresAt,
        ttl: expiresAt,
        ip: client.ip,
        userAgent: client.userAgent?.slice(0, 512),
      })
      .commit(),
    tx.refreshToken
      .create({ tokenHash: hashRefreshToken(refresh), sessionId, status: 'ACTIVE', createdAt, expiresAt, ttl: expiresAt })
      .commit(),
  ];
  const body = {
    session: {
      access_token: access.token,
      token_type: 'bearer',
      expires_in: config.accessTokenSeconds,
      expires_at: access.expiresAt,
      refresh_token: refresh,
      user: userView(u),
    },
  };
  return { writes, body };
};
