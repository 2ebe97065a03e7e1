import { config } from '#lib/core/config.ts';
import type { Db } from '#lib/db/service.ts';
import { ADDRESS_MAIL_LIMITS } from './recipient-mail.ts';
import { type BucketSettings, type BucketToken, takeToken } from './token-bucket.ts';

/**
 * How many e-mails a team or a user may cause per hour: token buckets (token-bucket.ts) taken
 * before the write that queues a mail. Not authentication: they keep Roster from being used to
 * mail strangers. What one address may be sent, whoever asks, is in recipient-mail.ts.
 */

/** Invitation e-mails one team may cause per hour (create, re-invite and resend each send one). */
export const TEAM_MAIL_LIMITS: BucketSettings = { burst: config.teamMailsPerHour, refill: config.teamMailsPerHour, refillSeconds: 3600 };

/**
 * Takes a token from the team's invitation-mail bucket. Call it before a write that sends an
 * invitation. Throws 429 `rate_limited` (with Retry-After) or 503.
 */
export const limitTeamMail = (db: Db, teamId: number, now: Date, s: BucketSettings = TEAM_MAIL_LIMITS): Promise<BucketToken> =>
  takeToken(db, 'team-mail', String(teamId), now, s);

/** Invitation e-mails one user may cause per hour, across every team: teams are free to create. */
export const USER_INVITE_MAIL_LIMITS: BucketSettings = {
  burst: config.userInviteMailsPerHour,
  refill: config.userInviteMailsPerHour,
  refillSeconds: 3600,
};

/**
 * Takes a token from the user's invitation-mail bucket (beside the team's). A request that ends
 * without sending gives both back (`giveBack`): only mails sent count. Throws 429 or 503.
 */
export const limitUserInviteMail = (
  db: Db,
  userUuid: string,
  now: Date,
  s: BucketSettings = USER_INVITE_MAIL_LIMITS,
): Promise<BucketToken> => takeToken(db, 'user-invite-mail', userUuid, now, s);

/**
 * Account e-mails one signed-in user may cause per hour (a confirmation link sent again, an e-mail
 * change), as many as one address may get: keyed by the user, so that strangers asking for resets
 * of the address cannot use up its owner's resends, and one account cannot mail many addresses.
 */
export const limitUserAccountMail = (db: Db, userUuid: string, now: Date, s: BucketSettings = ADDRESS_MAIL_LIMITS): Promise<BucketToken> =>
  takeToken(db, 'user-account-mail', userUuid, now, s);
