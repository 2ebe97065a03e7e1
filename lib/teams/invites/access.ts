/** Who may send and answer invites (a manager of the team, a confirmed address), and the mail allowances sending spends. */
import type { Actor, Claims } from '#lib/auth/session-items.ts';
import { memberOf, teamIdOf } from '#lib/auth/team-access.ts';
import { canManageInvites } from '#lib/auth/team-rules.ts';
import { config } from '#lib/core/config.ts';
import { AppError } from '#lib/core/errors.ts';
import type { Read } from '#lib/db/batch-read.ts';
import type { UserItem } from '#lib/db/items.ts';
import type { Db } from '#lib/db/service.ts';
import { limitTeamMail, limitUserInviteMail } from '#lib/limits/mail-allowances.ts';
import { takeUnsolicitedMail } from '#lib/limits/recipient-mail.ts';
import { type BucketToken, allOrNone, giveBack } from '#lib/limits/token-bucket.ts';

/** The caller's own user item, read with the rest of a request's items (never a request of its own). */
export const ownItem = (db: Db, userUuid: string) => [db.entities.user, { userUuid }] as const satisfies Read;

/** The actor's user item; gone means the account was deleted (its sessions with it). Throws `unauthorized`. */
export const accountOf = (u: UserItem | null): UserItem => {
  if (!u) throw new AppError('unauthorized');
  return u;
};

/**
 * Sending, reading and answering invites need a confirmed address (config
 * `invitesRequireVerifiedEmail`): an unconfirmed account could be anyone's address. Throws
 * `unauthorized`, `email_not_verified`.
 */
export const requireConfirmed = (u: UserItem | null): UserItem => {
  const account = accountOf(u);
  if (config.invitesRequireVerifiedEmail && !account.emailConfirmedAt) throw new AppError('email_not_verified');
  return account;
};

/**
 * Takes the recipient's allowance for invitations first (lib/limits/recipient-mail.ts: of many
 * senders at once, its gap lets one through and answers the others at once), then a token from the
 * team's and the sender's buckets side by side: all or none, nothing sent unless all agree.
 * Throws 429 or 503.
 */
export const takeInviteMail = async (db: Db, teamId: number, userUuid: string, email: string, now: Date): Promise<BucketToken[]> => {
  const recipient = await takeUnsolicitedMail(db, 'invitation', email, now);
  return [
    ...recipient,
    ...(await allOrNone(db, [limitTeamMail(db, teamId, now), limitUserInviteMail(db, userUuid, now)]).catch(async (error: unknown) => {
      await Promise.all(recipient.map((token) => giveBack(db, token)));
      throw error;
    })),
  ];
};

/**
 * Runs the transaction that writes the invitation's outbox message. Only mail sent counts: when
 * the transaction is refused (an AppError: a failed condition, a conflict, throttling; none of
 * them wrote anything), the tokens go back. Any other failure may have committed, so they stay.
 */
export const sendingOnly = async (db: Db, tokens: BucketToken[], write: () => Promise<void>): Promise<void> => {
  try {
    await write();
  } catch (error) {
    if (error instanceof AppError) await Promise.all(tokens.map((t) => giveBack(db, t)));
    throw error;
  }
};

/** requireMember, for OWNER and ADMIN only; `also` rides in its second BatchGetItem (memberOf). */
export const requireInviteManager = async <const T extends readonly Read[]>(
  db: Db,
  claims: Claims,
  slug: string,
  also: (actor: Actor) => T = () => [] as unknown as T,
) => {
  const { teamId, actor } = await teamIdOf(db, slug, claims);
  const access = await memberOf(db, teamId, slug, actor, also(actor));
  if (!canManageInvites(access.me.role)) throw new AppError('forbidden');
  return { ...access, actor };
};
