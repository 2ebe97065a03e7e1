import { isIPv6 } from 'node:net';
import { config } from '#lib/core/config.ts';
import { sha256Hex } from '#lib/core/sha256.ts';
import type { Db } from '#lib/db/service.ts';
import { type BucketSettings, type BucketToken, takeToken } from './token-bucket.ts';

/**
 * Limits per source network: API Gateway's `sourceIp` (never a header), IPv6 by its /64, for the
 * requests that need no account (sign-up, reset requests) and for failed sign-ins.
 */

/** Sign-in per source network: failed (or in-flight) password checks only. */
export const SIGNIN_LIMITS: BucketSettings = { burst: config.ipBurst, refill: config.ipRefill, refillSeconds: config.ipRefillSeconds };

/** Sign-up per source network: sized for a company onboarding its staff from one office. */
export const SIGNUP_LIMITS: BucketSettings = {
  burst: config.signupBurst,
  refill: config.signupRefill,
  refillSeconds: config.signupRefillSeconds,
};

/** The network a source address stands for: an IPv4 address, or the /64 of an IPv6 one. */
export const clientNetwork = (ip: string): string => {
  const address = ip.replace(/%.*$/, '');
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1] as string;
  if (!isIPv6(address)) return address;
  const hextets = (part: string): string[] =>
    part === ''
      ? []
      : part.split(':').flatMap((group) => {
          if (!group.includes('.')) return [group];
          const [a, b, c, d] = group.split('.').map(Number) as [number, number, number, number];
          return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
        });
  const [head = '', tail] = address.split('::');
  const left = hextets(head);
  const right = tail === undefined ? [] : hextets(tail);
  const groups = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
};

export const ipSubject = (ip: string): string => sha256Hex(clientNetwork(ip));

/**
 * Reserves a token of the caller's sign-in bucket: call it first, before the account limits.
 * Give it back (`giveBack`) when the password was right, or when the account limits refused the
 * attempt (no password was checked); keep it for a wrong password or an unknown e-mail.
 * Throws 429 `rate_limited` (with Retry-After) or 503.
 */
export const limitSignIn = (db: Db, clientIp: string, now: Date, s: BucketSettings = SIGNIN_LIMITS): Promise<BucketToken> =>
  takeToken(db, 'signin-ip', ipSubject(clientIp), now, s);

/** Takes a token from the caller's sign-up bucket. Throws 429 `rate_limited` (with Retry-After) or 503. */
export const limitSignUp = async (db: Db, clientIp: string, now: Date, s: BucketSettings = SIGNUP_LIMITS): Promise<void> => {
  await takeToken(db, 'signup-ip', ipSubject(clientIp), now, s);
};

/**
 * Reset requests per source network, sized like sign-up's: a request needs no account, so without
 * it one client could keep every known address's mail allowance used up. Throws 429 or 503.
 */
export const limitRecoverIp = (db: Db, clientIp: string, now: Date, s: BucketSettings = SIGNUP_LIMITS): Promise<BucketToken> =>
  takeToken(db, 'recover-ip', ipSubject(clientIp), now, s);
