import { timingSafeEqual } from 'node:crypto';
import { hashOpaqueToken } from '#lib/auth/opaque-tokens.ts';
import { type ClientInfo, sessionsForCap, trimSessions } from '#lib/auth/session-items.ts';
import { AppError } from '#lib/core/errors.ts';
import { EVENT_METRICS } from '#lib/core/metric-names.ts';
import { recordEvent } from '#lib/core/metrics.ts';
import { s256 } from '#lib/core/sha256.ts';
import type { Db } from '#lib/db/service.ts';
import { isConditionFailure } from '#lib/db/transactions.ts';
import type { AuthSession } from '#lib/wire/responses.ts';
import type { ProviderTokenInput } from '#lib/wire/oauth.ts';
import { openSession } from '../link-sign-in.ts';
import { linkTo } from './accounts.ts';

const refused = (why: string) => new AppError('token_expired', `This code ${why}: start the sign-in again.`);

const sameText = (a: string, b: string): boolean => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * The app trades the code the provider sign-in sent it back with (GoTrue's `grant_type=pkce`) for
 * a session, with the verifier of the challenge it started the sign-in with: a code carried off
 * by anyone else (a log, a Referer, a login CSRF planting an attacker's code) opens nothing. The
 * code is used up by the first try, right or wrong. A link's code links the identity first
 * (accounts.ts linkTo). The session's `amr` is `oauth`, at aal1: an account with a second factor
 * steps up as after a password. Throws `token_expired`, and a link's `identity_already_exists`,
 * `validation_failed`.
 */
export const exchangeCode = async (db: Db, input: ProviderTokenInput, client: ClientInfo, now: Date): Promise<AuthSession> => {
  const item = await db.entities.oauthCode
    .remove({ codeHash: hashOpaqueToken(input.code) })
    .go({ response: 'all_old' })
    .then(({ data }) => data)
    .catch((error: unknown) => {
      if (isConditionFailure(error)) return null;
      throw error;
    });
  if (!item || item.expiresAt <= now.getTime()) throw refused('has expired or was used already');
  if (!sameText(s256(input.codeVerifier), item.codeChallenge)) throw refused('was not issued to this code verifier');
  // A link's code: the identity joins the account now, for the app that started the link only.
  if (item.link) await linkTo(db, item.userUuid, item.provider, { ...item.link, emailVerified: true }, now);
  const u = (await db.entities.user.get({ userUuid: item.userUuid }).go({ consistent: true })).data;
  if (!u) throw refused('names an account that no longer exists');
  // The user's other sessions are read beside the new session's transaction, for the cap.
  const [others, session] = await Promise.all([sessionsForCap(db, u.userUuid), openSession(db, u, client, now, 'oauth')]);
  await trimSessions(db, u.userUuid, others, session.sessionId);
  recordEvent(EVENT_METRICS.signInSucceeded);
  return session.body;
};
