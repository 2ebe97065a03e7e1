import { createCipheriv, createDecipheriv, hkdfSync, randomBytes, randomUUID } from 'node:crypto';
import type { EntityItem } from 'electrodb';
import { config } from '../config.ts';
import { type Read, readTogether } from '../db/batch-read.ts';
import type { session as sessionEntity } from '../db/entities/users.ts';
import type { Db, Tx } from '../db/service.ts';
import { AppError } from '../errors.ts';
import { addDays, epochSeconds, isoMillis } from '../time.ts';
import { type UserItem, userView } from '../views.ts';
import type { Actor } from './actor.ts';
import { hashRefreshToken, newRefreshToken, signAccessToken } from './tokens.ts';

export type SessionItem = EntityItem<ReturnType<typeof sessionEntity>>;

/** Where a sign-in came from, as API Gateway saw it (never a client-supplied header). */
export interface ClientInfo {
  ip: string;
  userAgent: string | undefined;
}

/** A session counts while it exists (sign-out deletes it) and its absolute lifetime lasts. */
export const isLive = (s: SessionItem | null, now: number): s is SessionItem => s !== null && s.expiresAt * 1000 > now;

/** Refreshable: live, and used (signed in or refreshed) within the idle timeout. */
export const isRefreshable = (s: SessionItem | null, now: number): s is SessionItem =>
  isLive(s, now) && Date.parse(s.lastUsedAt) + config.refreshIdleDays * 86_400_000 > now;

/** The deletion time: the earlier of the absolute end and the idle end. */
const ttlOf = (expiresAt: number, lastUsed: Date): number =>
  Math.min(expiresAt, epochSeconds(addDays(lastUsed, config.refreshIdleDays)));

/**
 * Reads `reads` and the caller's session in one BatchGetItem, and lets the request go on only if
 * that session is live and the caller's own: sign-out bites on the very next request, on every
 * function instance, without a round trip of its own. Throws `unauthorized`.
 */
export const readAsActor = async <const T extends readonly Read[]>(
  db: Db,
  actor: Actor,
  reads: T,
): Promise<{ -readonly [I in keyof T]: EntityItem<T[I][0]> | null }> => {
  const own = [db.entities.session, { userUuid: actor.userUuid, sessionId: actor.sessionId }] as const;
  const results = await readTogether(db, [...reads, own] as const);
  if (!isLive(results[results.length - 1] as SessionItem | null, Date.now())) throw new AppError('unauthorized');
  actor.sessionChecked = true;
  return results.slice(0, -1) as { -readonly [I in keyof T]: EntityItem<T[I][0]> | null };
};

/**
 * The `data.session` body. Signing the same claims with the same Ed25519 key gives the same token,
 * so a refresh retried inside the grace window answers exactly the pair it answered first.
 */
export const sessionBody = async (u: UserItem, s: { sessionId: string; expiresAt: number }, refresh: string, issuedAt: Date) => {
  // An access token never outlives its session, even for verifiers that never ask Roster.
  const access = await signAccessToken({ userUuid: u.userUuid, email: u.email, sessionId: s.sessionId }, issuedAt, s.expiresAt);
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
 * transaction needs) and the `data.session` body to answer with once they are written.
 */
export const newSession = async (u: UserItem, client: ClientInfo, now: Date) => {
  const sessionId = randomUUID();
  const refresh = newRefreshToken();
  const expiresAt = epochSeconds(addDays(now, config.refreshTokenDays));
  const createdAt = isoMillis(now);
  const ttl = ttlOf(expiresAt, now);
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
      })
      .commit(),
    tx.refreshToken
      .create({ tokenHash: hashRefreshToken(refresh), sessionId, userUuid: u.userUuid, status: 'ACTIVE', createdAt, expiresAt, ttl })
      .commit(),
  ];
  return { writes, body: await sessionBody(u, { sessionId, expiresAt }, refresh, now) };
};

/**
 * The successor of a refresh token is stored sealed with AES-256-GCM under a key derived from the
 * token itself: only someone presenting that token can open it (the table holds just its hash).
 */
const sealKey = (parent: string): Buffer =>
  Buffer.from(hkdfSync('sha256', Buffer.from(parent, 'utf8'), Buffer.alloc(0), 'roster refresh successor', 32));

export const sealChild = (parent: string, child: string): string => {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealKey(parent), iv);
  const sealed = Buffer.concat([cipher.update(child, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString('base64url');
};

export const openChild = (parent: string, seal: string): string => {
  const bytes = Buffer.from(seal, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', sealKey(parent), bytes.subarray(0, 12));
  decipher.setAuthTag(bytes.subarray(bytes.length - 16));
  return Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString('utf8');
};

/** Items to write when a session is used (refreshed): its idle timeout starts again. */
export const touchSession = (tx: Tx, s: SessionItem, now: Date) =>
  tx.session
    .patch({ userUuid: s.userUuid, sessionId: s.sessionId })
    .set({ lastUsedAt: isoMillis(now), ttl: ttlOf(s.expiresAt, now) })
    .where((a, op) => op.gt(a.expiresAt, epochSeconds(now)))
    .commit();
