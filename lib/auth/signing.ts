import { type CryptoKey, SignJWT, importJWK } from 'jose';
import { config } from '#lib/core/config.ts';
import { db as sharedDb } from '#lib/db/service.ts';
import type { SecondFactorMethod } from '#lib/db/entities/users.ts';
import type { Identity } from './actor.ts';
import { KeyCache, unavailable } from './keys/cache.ts';
import { type Algorithm, signingKeyOf } from './keys/model.ts';
import { loadPrivateKeyset } from './private-keyset.ts';
import { readPublishedKeys } from './keys/table-store.ts';
import { ACCESS_TOKEN_TYPE, AUDIENCE } from './tokens.ts';

/**
 * Signing access tokens: only sign-up, sign-in, refresh and password reset import this (and with it the Secrets
 * Manager client); every other function only verifies (tokens.ts).
 */
interface Signer {
  kid: string;
  alg: Algorithm;
  key: CryptoKey;
}

const signers = new KeyCache<Signer>(async () => {
  const keyset = await loadPrivateKeyset('sign');
  // The item says which keys are published, and since when: a key signs only once published.
  const published = (await readPublishedKeys(sharedDb(), true)) ?? [];
  const key = signingKeyOf(keyset, published, new Date());
  if (!key) throw new Error('no key of the keyset is published and unretired: none can sign');
  return { kid: key.kid, alg: key.alg, key: (await importJWK(key.privateJwk, key.alg)) as CryptoKey };
});

/** The key that signs access tokens now (503 `unavailable` when it cannot be loaded). */
export const currentSigningKey = (): Promise<Signer> => signers.get().catch(unavailable);

/**
 * The claims of an access token: GoTrue's (Supabase auth-js's `JwtPayload` accepts them). `aal`
 * is `aal2` once the session proved a second factor; `amr` says how and when each step happened,
 * the latest first (as GoTrue orders it).
 */
export type AccessTokenClaims = {
  iss: string;
  sub: string;
  aud: string;
  exp: number;
  iat: number;
  role: string;
  aal: 'aal1' | 'aal2';
  amr: { method: SignInMethod | SecondFactorMethod; timestamp: number }[];
  session_id: string;
  email: string;
  is_anonymous: false;
};

/** How a session was opened (`amr`): a password, a confirmation link, a reset link, a passkey alone, a provider. */
export type SignInMethod = 'password' | 'otp' | 'recovery' | 'passkey' | 'oauth';

export interface SignOptions {
  /** How the session was opened; default a password. */
  method?: SignInMethod;
  /** The token never outlives this (epoch s): its session's end. */
  notAfter?: number;
  /** When the password was checked: the session's creation (`amr`); default `now`. */
  authenticatedAt?: Date;
  /** The second factor the session proved (aal2), and when (epoch s). */
  second?: { method: SecondFactorMethod; at: number } | undefined;
}

/**
 * Signs an access token for `actor`, valid from `now` for the configured lifetime but never past
 * `notAfter`, with the current key (Ed25519 by default) named in `kid`. No random member and no
 * clock read: the same claims and key give the same token (refresh retries rely on it).
 */
export const signAccessToken = async (
  actor: Omit<Identity, 'aal'>,
  now: Date,
  { notAfter = Number.POSITIVE_INFINITY, authenticatedAt = now, method = 'password', second }: SignOptions = {},
): Promise<{ token: string; expiresAt: number }> => {
  const iat = Math.floor(now.getTime() / 1000);
  const expiresAt = Math.min(iat + config.accessTokenSeconds, notAfter);
  const signer = await currentSigningKey();
  const claims: AccessTokenClaims = {
    iss: config.issuer,
    sub: actor.userUuid,
    aud: AUDIENCE,
    exp: expiresAt,
    iat,
    role: AUDIENCE,
    aal: second ? 'aal2' : 'aal1',
    amr: [
      ...(second ? [{ method: second.method, timestamp: second.at }] : []),
      { method, timestamp: Math.floor(authenticatedAt.getTime() / 1000) },
    ],
    session_id: actor.sessionId,
    email: actor.email,
    is_anonymous: false,
  };
  const token = await new SignJWT(claims).setProtectedHeader({ alg: signer.alg, typ: ACCESS_TOKEN_TYPE, kid: signer.kid }).sign(signer.key);
  return { token, expiresAt };
};
