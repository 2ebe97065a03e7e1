import { randomInt } from 'node:crypto';
import { config } from '#lib/core/config.ts';
import type { Db } from '#lib/db/service.ts';
import { accountSubject } from './account-key.ts';
import { type HourlySettings, passHourly, stampMs } from './hourly-cap.ts';
import { forgottenAt, limiterUnavailable } from './limit-state.ts';
import { type BackoffSettings, accountNetworkSubject, passNetwork, takeBackNetworkCount } from './password-backoff.ts';
import { SIGNIN_LIMITS } from './source-network.ts';
import { type BucketSettings, takeToken } from './token-bucket.ts';

/**
 * Password checks (sign-in, and a password change by a signed-in user) are limited by two items:
 * the consecutive failures of the (account, network) with their back-off (password-backoff.ts),
 * then the account's sliding hourly cap (hourly-cap.ts). The account is keyed by the SHA-256 of the
 * normalised e-mail, so unknown e-mails count exactly like known ones; the network is what
 * `clientNetwork` makes of the source IP.
 *
 * An attempt is counted as a failure when it is admitted, before the password is checked, so
 * concurrent attempts cannot overtake the count; a success sets its network's fails = 0 and
 * until = 0 and deletes its own `recent` entry (failures stay in `recent` for their hour). When
 * the cap refuses, the attempt takes back its own network count: ADD fails -1, SET until = 0 if
 * last = its token (nothing counted since; otherwise the count stays, erring on the strict side).
 * Nothing locks an account for good; a state untouched for 12 hours is forgotten (its `ttl`; for
 * the network items compared in code, while `recent` entries carry their own times: DynamoDB's TTL
 * sweep is only housekeeping).
 *
 * The accepted trade-off: the hourly cap is per account, so an attacker who spends
 * `hourlyFailures` guesses an hour, spread over enough networks (with the defaults one network
 * gets at most 17 guesses in its first hour and 4 an hour after that), also refuses the owner for
 * as long as the window stays full: until the oldest of those guesses is an hour old.
 */

export type AccountSettings = BackoffSettings & HourlySettings;

export const ACCOUNT_LIMITS: AccountSettings = {
  freeFailures: config.accountFreeFailures,
  backoffSeconds: config.accountBackoffSeconds,
  backoffMaxSeconds: config.accountBackoffMaxSeconds,
  hourlyFailures: config.accountHourlyFailures,
};

/** Password changes per user (the current password is also under the account limits). */
export const PASSWORD_CHANGE_LIMITS: BucketSettings = SIGNIN_LIMITS;

/** An admitted password attempt: hand it to `recordPasswordSuccess` when the password was right. */
export interface PasswordAttempt {
  /** The account's key (its `recent` set). */
  readonly subject: string;
  /** The (account, network) key (its consecutive failures). */
  readonly network: string;
  /** Its entry in the account's `recent` set. */
  readonly stamp: number;
}

/**
 * Admits one password check for the account of `email` from the source IP `clientIp` (sign-in,
 * or a password change by a signed-in user, which shares the sign-in counters): call it BEFORE
 * verifying the password, and do not verify when it throws. The consecutive failures and their
 * back-off count per (account, source network), so a guesser on one network does not hold up the
 * owner on another; the hourly cap counts the account's failures from every network. The attempt
 * counts as a failure from now on, so a failed check needs no further call; after a successful
 * check, call `recordPasswordSuccess(db, attempt)`. Throws 429 `rate_limited` with `Retry-After`
 * while this network is backing off on the account or the account is at its hourly cap (the same
 * answer whatever the password), 503 `unavailable` when DynamoDB cannot be reached.
 */
export const checkPasswordAttempt = async (
  db: Db,
  email: string,
  clientIp: string,
  now: Date,
  s: AccountSettings = ACCOUNT_LIMITS,
): Promise<PasswordAttempt> => {
  const subject = accountSubject(email);
  const network = accountNetworkSubject(email, clientIp);
  const token = randomInt(2 ** 48 - 1);
  await passNetwork(db, network, token, now.getTime(), s);
  try {
    return { subject, network, stamp: await passHourly(db, subject, now.getTime(), s) };
  } catch (error) {
    await takeBackNetworkCount(db, network, token);
    throw error;
  }
};

/**
 * After a successful password check admitted by `checkPasswordAttempt`: resets the consecutive
 * failures (and the back-off) of the attempt's network on the account, and takes this attempt out
 * of the account's hourly count. Two unconditional updates. Throws 503 `unavailable` when
 * DynamoDB cannot be reached.
 */
export const recordPasswordSuccess = async (db: Db, attempt: PasswordAttempt): Promise<void> => {
  const entity = db.entities.rateLimit;
  try {
    await Promise.all([
      entity
        .update({ scope: 'account-net', subject: attempt.network })
        .set({ fails: 0, until: 0, ttl: forgottenAt(stampMs(attempt.stamp)) })
        .remove(['last'])
        .go({ response: 'none' }),
      entity
        .update({ scope: 'account', subject: attempt.subject })
        .delete({ recent: [attempt.stamp] })
        .go({ response: 'none' }),
    ]);
  } catch (error) {
    throw limiterUnavailable(error);
  }
};

/**
 * For a password change (PUT /api/auth/user with `password`): takes a token from the user's
 * password-change bucket. Per user, not per address: everyone behind one NAT may change their
 * password, while one stolen session still cannot make the service hash without end (each change
 * costs two hashes). Call it once the request is known to change the password and its new
 * password has passed validation, before `checkPasswordAttempt` and before any hashing. Throws 429
 * `rate_limited` with `Retry-After` when the bucket is empty, 503 `unavailable` when DynamoDB
 * cannot be reached.
 */
export const limitPasswordChange = async (
  db: Db,
  userUuid: string,
  now: Date,
  s: BucketSettings = PASSWORD_CHANGE_LIMITS,
): Promise<void> => {
  await takeToken(db, 'password-user', userUuid, now, s);
};
