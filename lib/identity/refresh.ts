import { hashOpaqueToken, newOpaqueToken } from '#lib/auth/opaque-tokens.ts';
import { type SessionItem, endSessions, isRefreshable } from '#lib/auth/session-items.ts';
import { openChild, sealChild, sessionBody, sessionRefreshToken, touchSession } from '#lib/auth/sessions.ts';
import { config } from '#lib/core/config.ts';
import { AppError, rateLimited } from '#lib/core/errors.ts';
import { noteRequest } from '#lib/core/log.ts';
import { EVENT_METRICS } from '#lib/core/metric-names.ts';
import { recordEvent } from '#lib/core/metrics.ts';
import { readTogether } from '#lib/db/batch-read.ts';
import type { UserItem } from '#lib/db/items.ts';
import type { Db } from '#lib/db/service.ts';
import { NOTHING_WRITTEN, commit, named, write } from '#lib/db/transactions.ts';
import { REFRESH_LIMITS } from '#lib/limits/session-refresh.ts';
import { bucketTimes, planBucket } from '#lib/limits/token-bucket.ts';
import type { RefreshInput } from '#lib/wire/schemas.ts';

const expired = () => new AppError('unauthorized', 'The refresh token is invalid, expired or revoked; sign in again.');

/**
 * The session's rotation bucket after one more rotation at `now` (a GCRA `tat`, as in
 * lib/limits/token-bucket.ts), or 429 when it is empty.
 */
const nextRefreshTat = (s: SessionItem, now: Date): number => {
  const t = now.getTime();
  const plan = planBucket(s.refreshTat, t, REFRESH_LIMITS);
  if (plan.kind === 'limited') throw rateLimited(plan.waitMs);
  return Math.max(s.refreshTat ?? t, t) + bucketTimes(REFRESH_LIMITS).interval;
};

/**
 * Trades a refresh token for a new pair. The token is rotated: it stops working, and a retry
 * within the grace window gets the same new pair (two tabs refreshing at once stay signed in).
 * A rotated token presented after the window means it leaked: the whole session (every token
 * descended from that sign-in) ends. Rotations are limited per session (a few a minute; a retry
 * in the grace window is not a rotation), never per address: the token's 256 random bits are the
 * protection, and an address limit would only sign out people behind one NAT. Throws
 * `unauthorized`, `rate_limited`.
 */
export const refresh = async (db: Db, input: RefreshInput, now: Date) => {
  const parent = input.refresh_token;
  const tokenHash = hashOpaqueToken(parent);
  let token = (await db.entities.refreshToken.get({ tokenHash }).go({ consistent: true })).data;
  if (!token) throw expired();
  const [s, u] = await readTogether(db, [
    [db.entities.session, { userUuid: token.userUuid, sessionId: token.sessionId }],
    [db.entities.user, { userUuid: token.userUuid }],
  ] as const);
  if (!isRefreshable(s, now.getTime()) || !u || s.userUuid !== token.userUuid) throw expired();
  // Issued before the session stepped up to aal2: retired (lib/auth/sessions.ts raiseSession).
  if (s.refreshFrom !== undefined && token.createdAt < s.refreshFrom) throw expired();
  noteRequest({ userId: u.userUuid });

  const child = newOpaqueToken();
  let lostRace = false;
  await commit(
    async () => {
      if (lostRace) token = (await db.entities.refreshToken.get({ tokenHash }).go({ consistent: true })).data;
      if (!token || token.status !== 'ACTIVE') return NOTHING_WRITTEN;
      const tat = nextRefreshTat(s, now);
      return write(db, (tx) => [
        named(
          'parent',
          tx.refreshToken
            .patch({ tokenHash })
            .set({ status: 'ROTATED', rotatedAt: now.getTime(), childSeal: sealChild(parent, child) })
            .where((a, op) => op.eq(a.status, 'ACTIVE'))
            .commit(),
        ),
        named('child', sessionRefreshToken(tx, child, s, now)),
        named('session', touchSession(tx, s, now, tat)),
      ]);
    },
    // Another refresh of the same token won: read it again and answer as a retry would. The
    // session's own condition (live, `refreshTat` as read) fails alone only when it ended meanwhile:
    // its one active token is this one, so no other rotation can move its `refreshTat`.
    {
      parent: () => {
        lostRace = true;
        return 'retry';
      },
      otherwise: expired,
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
  recordEvent(EVENT_METRICS.refreshReuseDetected);
  await endSessions(db, s.userUuid, [s.sessionId]);
  throw new AppError('unauthorized', 'This refresh token was already used; the session has been ended. Sign in again.');
};
