import { type CryptoKey, type JWTHeaderParameters, type JWTPayload, decodeJwt, jwtVerify } from 'jose';
import { config } from '#lib/core/config.ts';
import { AppError } from '#lib/core/errors.ts';
import type { Identity } from './actor.ts';
import { ALGORITHMS, LEEWAY_SECONDS } from './keys/model.ts';
import { verificationKey } from './keys/verification.ts';

/** RFC 9068's type: a token of another kind (an ID token, a refresh token) is never taken as access. */
export const ACCESS_TOKEN_TYPE = 'at+jwt';
export const AUDIENCE = 'authenticated';
/**
 * The issuer every deployment signed as before issue 22 made it the deployment's URL: its tokens
 * are still taken until they expire (an hour after the upgrade). Only our own keys sign, so an
 * extra accepted name lets nobody else in.
 */
export const LEGACY_ISSUER = 'roster';

/**
 * Base64url has several spellings of one byte string (the unused low bits of the last
 * character); only the one we issue is accepted, so a token string is one token.
 */
const isCanonical = (token: string): boolean =>
  token.split('.').every((segment) => Buffer.from(segment, 'base64url').toString('base64url') === segment);

/**
 * Only our own published keys, by `kid`; jose has already refused an algorithm not configured.
 * Key headers of the token (jku, x5u, jwk, x5c) are never looked at.
 */
const ourKey = async (header: JWTHeaderParameters): Promise<CryptoKey> => {
  const key = await verificationKey(header.kid, header.alg);
  if (!key) throw new Error('no key of ours has that kid');
  return key;
};

/** The identity a token's payload names, if its members are of the types we issue; throws otherwise. */
const identityOf = ({ sub, email, session_id: sessionId, aal }: JWTPayload): Identity => {
  if (typeof sub !== 'string' || typeof email !== 'string' || typeof sessionId !== 'string') throw new Error('claims of the wrong type');
  return { userUuid: sub, email, sessionId, aal: aal === 'aal2' ? 'aal2' : 'aal1' };
};

/** Anything off is a plain 401; only a key store that cannot be read is another answer (503 `unavailable`). */
const unauthorizedUnlessUnavailable = (error: unknown): never => {
  if (error instanceof AppError && error.code === 'unavailable') throw error;
  throw new AppError('unauthorized');
};

/**
 * What a token claims, WITHOUT checking its signature: the keys of the reads that go with the
 * signature check on a cold start (readAsActor). Nothing here is to be trusted before
 * verifyAccessToken passed. Throws `unauthorized` for a token that is not even shaped like ours.
 */
export const claimedIdentity = (token: string): Identity => {
  try {
    if (!isCanonical(token)) throw new Error('not the issued spelling');
    return identityOf(decodeJwt(token));
  } catch {
    throw new AppError('unauthorized');
  }
};

/**
 * Verifies signature, algorithm, key, type, issuer, audience, expiry and lifetime; anything off is
 * a plain 401. Only a key store that cannot be read is another answer: 503 `unavailable`.
 */
export const verifyAccessToken = async (token: string): Promise<Identity> => {
  try {
    if (!isCanonical(token)) throw new Error('not the issued spelling');
    const { payload } = await jwtVerify(token, ourKey, {
      algorithms: [...ALGORITHMS],
      typ: ACCESS_TOKEN_TYPE,
      issuer: [config.issuer, LEGACY_ISSUER],
      audience: AUDIENCE,
      requiredClaims: ['exp', 'iat', 'sub', 'session_id', 'email'],
      clockTolerance: LEEWAY_SECONDS,
      // Also refuses an `iat` in the future (beyond the leeway): we never issue one.
      maxTokenAge: config.accessTokenSeconds,
    });
    const { exp, iat } = payload;
    // We issue whole seconds; a fractional NumericDate is not a token of ours.
    if (!Number.isSafeInteger(exp) || !Number.isSafeInteger(iat)) throw new Error('dates of the wrong type');
    // Nor one that lives longer than we sign them for: a signer's bug or a stolen key must not mint long tokens.
    if ((exp as number) - (iat as number) > config.accessTokenSeconds) throw new Error('lives longer than we issue');
    return identityOf(payload);
  } catch (error) {
    return unauthorizedUnlessUnavailable(error);
  }
};

const AUTHORIZATION = /^(?:token|bearer) ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/i;

/**
 * `Token <jwt>` as the seed says, or `Bearer <jwt>`; the scheme word in any case. Two headers
 * arrive comma-joined from API Gateway and fail the pattern, so duplicates are refused.
 */
export const tokenFromAuthorization = (header: string | undefined): string => {
  const match = header && header.length <= 8192 ? AUTHORIZATION.exec(header) : null;
  if (!match?.[1]) throw new AppError('unauthorized');
  return match[1];
};
