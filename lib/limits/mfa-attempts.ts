import type { Db } from '#lib/db/service.ts';
import { type BucketSettings, type BucketToken, giveBack, takeTokens } from './token-bucket.ts';

/**
 * Guesses at a second factor (a TOTP code, a recovery code) are limited per factor and per
 * account, and only the wrong ones count: a verify takes a token from each bucket before it
 * checks, and gives them back when the code was right. A six-digit TOTP code with one step of
 * skew either side is one of three right answers in a million: the account's 10 an hour, 240 a
 * day, give a guesser about one chance in 1,300 a day, while the factor's own 5 then 1 a minute
 * stop a burst on one factor at once.
 */
export const FACTOR_GUESS_LIMITS: BucketSettings = { burst: 5, refill: 5, refillSeconds: 300 };
export const ACCOUNT_GUESS_LIMITS: BucketSettings = { burst: 10, refill: 10, refillSeconds: 3600 };

/** Admits one guess (throws 429 `rate_limited` with Retry-After, or 503): at `factorId` when given, and at the account. */
export const takeMfaGuess = (db: Db, userUuid: string, factorId: string | undefined, now: Date): Promise<BucketToken[]> =>
  takeTokens(
    db,
    [
      ...(factorId === undefined ? [] : [{ scope: 'mfa-factor' as const, subject: factorId, settings: FACTOR_GUESS_LIMITS }]),
      { scope: 'mfa-user' as const, subject: userUuid, settings: ACCOUNT_GUESS_LIMITS },
    ],
    now,
  );

/** The guess was right: it does not count. */
export const forgiveMfaGuess = (db: Db, tokens: readonly BucketToken[]): Promise<void> =>
  Promise.all(tokens.map((token) => giveBack(db, token))).then(() => undefined);
