import { createHash, randomBytes } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import { config } from '../config.ts';
import { AppError } from '../errors.ts';
import { signingKey } from './signing-key.ts';

/** Who is calling, as proven by a verified access token. */
export interface Actor {
  userUuid: string;
  email: string;
  sessionId: string;
}

const ALGORITHM = 'HS256';
/** RFC 9068's type: a token of another kind (an ID token, a refresh token) is never taken as access. */
const TYPE = 'at+jwt';
export const AUDIENCE = 'authenticated';

export const signAccessToken = async (actor: Actor, now: Date): Promise<{ token: string; expiresAt: number }> => {
  const iat = Math.floor(now.getTime() / 1000);
  const expiresAt = iat + config.accessTokenSeconds;
  const token = await new SignJWT({ email: actor.email, role: AUDIENCE, session_id: actor.sessionId })
    .setProtectedHeader({ alg: ALGORITHM, typ: TYPE })
    .setSubject(actor.userUuid)
    .setAudience(AUDIENCE)
    .setIssuer(config.issuer)
    .setIssuedAt(iat)
    .setExpirationTime(expiresAt)
    .sign(await signingKey());
  return { token, expiresAt };
};

/**
 * Base64url has several spellings of one byte string (the unused low bits of the last
 * character); only the one we issue is accepted, so a token string is one token.
 */
const isCanonical = (token: string): boolean =>
  token.split('.').every((segment) => Buffer.from(segment, 'base64url').toString('base64url') === segment);

/** Verifies signature, algorithm, type, issuer, audience and expiry; anything off is a plain 401. */
export const verifyAccessToken = async (token: string): Promise<Actor> => {
  const key = await signingKey();
  try {
    if (!isCanonical(token)) throw new Error('not the issued spelling');
    const { payload } = await jwtVerify(token, key, {
      algorithms: [ALGORITHM],
      typ: TYPE,
      issuer: config.issuer,
      audience: AUDIENCE,
      requiredClaims: ['exp', 'iat', 'sub', 'session_id', 'email'],
      clockTolerance: 30,
    });
    const { sub, email, session_id: sessionId } = payload;
    if (typeof sub !== 'string' || typeof email !== 'string' || typeof sessionId !== 'string') {
      throw new Error('claims of the wrong type');
    }
    return { userUuid: sub, email, sessionId };
  } catch {
    throw new AppError('unauthorized');
  }
};

/** 256 random bits, URL-safe; only its hash is ever stored. */
export const newRefreshToken = (): string => randomBytes(32).toString('base64url');

export const hashRefreshToken = (token: string): string => createHash('sha256').update(token).digest('hex');

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
