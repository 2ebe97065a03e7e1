import { config } from '#lib/core/config.ts';
import { AppError } from '#lib/core/errors.ts';
import type { OutboxKind } from '#lib/db/entities/outbox.ts';
import type { Db } from '#lib/db/service.ts';
import { accountSubject } from './account-key.ts';
import { type BucketSettings, type BucketToken, type Take, giveBack, takeTokens } from './token-bucket.ts';

/**
 * Allowances per recipient (docs/mail.md, "Allowances"), whoever causes the mail: keyed by the
 * address as sign-up normalises it, hashed (account-key.ts), never by an account or a team, so
 * that deleting an account and signing up again, or asking from other accounts and teams, starts
 * nothing afresh.
 * - Every kind: one e-mail of the kind per RECIPIENT_MAIL_GAP_SECONDS at most.
 * - Mail the recipient did not ask for (invitations, ownership nominations): a few per hour and
 *   per day from every sender together. The request that causes one is charged (its sender, a
 *   confirmed member, gets the 429: it tells nothing about any account).
 * - Account mail (confirmations, resets, address changes and their notices): a few per hour. The
 *   mailer is charged as it sends (lib/mail/outbox.ts), never the request: a request about an
 *   address then answers, writes and takes the same whether or not an account has it.
 */

/** The kinds of mail the recipient did not ask for. */
export type UnsolicitedKind = Extract<OutboxKind, 'invitation' | 'transfer'>;
/** The kinds of account mail: each about the recipient's own (or claimed) address. */
export type AccountKind = Extract<
  OutboxKind,
  | 'verification'
  | 'confirmation'
  | 'recovery'
  | 'email_change'
  | 'email_change_notice'
  | 'address_in_use'
  | 'recovery_code_used'
  | 'factor_added'
  | 'identities_changed'
  | 'identity_refused'
>;

const hourly = (n: number): BucketSettings => ({ burst: n, refill: n, refillSeconds: 3600 });

/** Account e-mails one address may be sent per hour. */
export const ADDRESS_MAIL_LIMITS: BucketSettings = hourly(config.accountMailsPerAddressHour);

/** A confirmation link sent again by address is a confirmation link: one gap for both. */
const gapKind = (kind: UnsolicitedKind | AccountKind): string => (kind === 'confirmation' ? 'verification' : kind);

const gap = (kind: UnsolicitedKind | AccountKind, subject: string): Take[] =>
  config.recipientMailGapSeconds > 0
    ? [
        {
          scope: 'recipient-gap',
          subject: `${gapKind(kind)}-${subject}`,
          settings: { burst: 1, refill: 1, refillSeconds: config.recipientMailGapSeconds },
        },
      ]
    : [];

/** What a sender is told when the recipient's allowance is spent. */
export const UNSOLICITED_SPENT =
  'This address has been sent as many invitations and nominations as it may get for now, from all senders together; try again later.';

/**
 * The gap first, then the rest, all or none: of many requests for one address at once, the gap
 * lets one through at once and answers the others, so the hour's and the day's buckets see one
 * writer instead of all of them racing on three items (where each could lose a bucket to the
 * others and give back what it took, and none would pass).
 */
const gapThenRest = async (db: Db, gapTakes: Take[], rest: Take[], now: Date): Promise<BucketToken[]> => {
  const first = await takeTokens(db, gapTakes, now);
  try {
    return [...first, ...(await takeTokens(db, rest, now))];
  } catch (error) {
    await Promise.all(first.map((token) => giveBack(db, token)));
    throw error;
  }
};

/**
 * Takes the recipient's tokens for an invitation or a nomination to `address`: the gap of its kind,
 * the hour's and the day's. All or none. Throws 429 (with Retry-After and UNSOLICITED_SPENT) or 503.
 */
export const takeUnsolicitedMail = async (db: Db, kind: UnsolicitedKind, address: string, now: Date): Promise<BucketToken[]> => {
  const subject = accountSubject(address);
  const day = config.unsolicitedMailsPerAddressDay;
  return gapThenRest(
    db,
    gap(kind, subject),
    [
      { scope: 'recipient-unsolicited-hour', subject, settings: hourly(config.unsolicitedMailsPerAddressHour) },
      { scope: 'recipient-unsolicited-day', subject, settings: { burst: day, refill: day, refillSeconds: 24 * 3600 } },
    ],
    now,
  ).catch((error: unknown) => {
    throw error instanceof AppError && error.code === 'rate_limited'
      ? new AppError('rate_limited', UNSOLICITED_SPENT, { headers: error.headers })
      : error;
  });
};

/**
 * Takes the recipient's tokens for an account e-mail to `address`: the gap of its kind and the
 * hour's. The notice of an e-mail change only takes the gap: only the account's own session can
 * cause it (and the user's allowance bounds that), and strangers asking for resets of the address
 * must not be able to silence it. Throws 429 or 503.
 */
export const takeAccountMail = (db: Db, kind: AccountKind, address: string, now: Date): Promise<BucketToken[]> => {
  const subject = accountSubject(address);
  const notice =
    kind === 'email_change_notice' || kind === 'recovery_code_used' || kind === 'factor_added' || kind === 'identities_changed';
  const hour: Take[] = notice ? [] : [{ scope: 'address-mail', subject, settings: ADDRESS_MAIL_LIMITS }];
  return gapThenRest(db, gap(kind, subject), hour, now);
};
