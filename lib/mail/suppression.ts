import * as z from 'zod/mini';
import { AppError } from '#lib/core/errors.ts';
import { log } from '#lib/core/log.ts';
import { EVENT_METRICS } from '#lib/core/metric-names.ts';
import { recordEvent } from '#lib/core/metrics.ts';
import { isoMillis } from '#lib/core/time.ts';
import type { Read } from '#lib/db/batch-read.ts';
import type { Db } from '#lib/db/service.ts';
import { isConditionFailure } from '#lib/db/transactions.ts';
import { accountSubject, normaliseEmail } from '#lib/limits/account-key.ts';
import { Email } from '#lib/wire/schemas.ts';

/**
 * Addresses Roster no longer mails (docs/operations.md, "Bounces and complaints"). SES reports
 * bounces and complaints through the configuration set's SNS topic to functions/mail-events.ts,
 * which hands each message here: a permanent bounce or a complaint suppresses its address; the
 * mailer sends nothing to a suppressed address, and an invite to one is refused (`suppressedError`).
 */

/** Whether mail to `email` bounced for good or was marked as spam: one GetItem (eventually consistent, half a read unit). */
export const isSuppressed = async (db: Db, email: string): Promise<boolean> =>
  (await db.entities.mailSuppression.get({ email: normaliseEmail(email) }).go()).data !== null;

/** The suppression item of `email`, for a BatchGetItem the caller makes anyway (lib/teams/invites/create.ts). */
export const suppressionOf = (db: Db, email: string) =>
  [db.entities.mailSuppression, { email: normaliseEmail(email) }] as const satisfies Read;

/**
 * What an invite to a suppressed address answers (422, like any other rule the address breaks), and
 * one to an address whose owner said no to the team (lib/mail/blocks.ts): one answer, never which.
 */
export const SUPPRESSED_MESSAGE =
  'Roster no longer sends invitations to this address: mail to it bounced or was marked as spam, or its owner asked not to be invited';

export const suppressedError = (): AppError => new AppError('validation_failed', undefined, { fields: { email: SUPPRESSED_MESSAGE } });

export interface Suppression {
  email: string;
  reason: 'bounce' | 'complaint';
  /** What SES said, for the operator deciding whether to lift it. */
  detail: string;
  /** When the event happened (ISO 8601). */
  at: string;
}

/**
 * Marks `email` suppressed. Idempotent, and order-proof: an event older than the one stored (SNS
 * may deliver twice, and out of order) changes nothing; a newer one replaces `reason`, `detail`
 * and `at`, while `since` keeps the first. One conditional UpdateItem.
 */
export const suppress = async (db: Db, { email, reason, detail, at }: Suppression): Promise<void> => {
  try {
    await db.entities.mailSuppression
      .upsert({ email: normaliseEmail(email), reason, detail, at })
      .ifNotExists({ since: at })
      .where((a, op) => `${op.notExists(a.at)} OR ${op.lte(a.at, at)}`)
      .go({ response: 'none' });
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
};

// SES event publishing records (docs: "Contents of event data that Amazon SES publishes to Amazon
// SNS"). Only the fields used here are required; the rest is passed over.
const When = z.pipe(
  z.iso.datetime({ offset: true }),
  z.transform((t) => isoMillis(new Date(t))),
);

const Bounce = z.object({
  bounceType: z.string(),
  bounceSubType: z.optional(z.string()),
  bouncedRecipients: z.array(z.object({ emailAddress: Email, diagnosticCode: z.optional(z.string()) })),
  timestamp: When,
});

const Complaint = z.object({
  complainedRecipients: z.array(z.object({ emailAddress: Email })),
  complaintFeedbackType: z.optional(z.string()),
  complaintSubType: z.optional(z.nullable(z.string())),
  timestamp: When,
});

/** `eventType` from a configuration set; `notificationType` if the identity's own notifications are sent here too. */
const Envelope = z.object({ eventType: z.optional(z.string()), notificationType: z.optional(z.string()) });

/** One recipient's part of an SES event. */
export interface Feedback extends Suppression {
  /** Whether this event suppresses the address. */
  suppresses: boolean;
}

export type SesEvent =
  | { kind: 'feedback'; eventType: 'Bounce' | 'Complaint'; feedback: Feedback[] }
  /** Another event type (Delivery, Send, Open …): nothing to do. */
  | { kind: 'ignored'; eventType: string }
  /** Not JSON, or a Bounce or Complaint without the fields relied on. */
  | { kind: 'malformed'; problem: string };

/** At most this much of a diagnostic code is kept: enough to tell "user unknown" from a block. */
const DETAIL_MAX = 500;

/**
 * Which bounces suppress: `Permanent` only (SES's own suppression list does the same). `Transient`
 * (mailbox full, message too large, SES gave up retrying) may work next time. `Undetermined`
 * (SES could not tell why) does not suppress either: an invitation is one message a person asked
 * for, so a wrong suppression costs more than one more bounce; the MailBounced metric counts it.
 */
const suppressingBounce = (bounceType: string): boolean => bounceType === 'Permanent';

/**
 * Every complaint suppresses except the feedback type `not-spam` (RFC 5965: the recipient said the
 * message is not spam), including SES's `OnAccountSuppressionList` (not sent: an earlier complaint).
 */
const suppressingComplaint = (feedbackType: string | undefined): boolean => feedbackType !== 'not-spam';

const problemOf = (error: z.core.$ZodError): string =>
  error.issues.map((issue) => `${issue.path.join('.') || '(message)'}: ${issue.message}`).join('; ');

/** Reads one SNS message body: what it says about which addresses, or why it cannot be used. */
export const parseSesEvent = (message: string): SesEvent => {
  let json: unknown;
  try {
    json = JSON.parse(message);
  } catch {
    return { kind: 'malformed', problem: 'not JSON' };
  }
  const envelope = Envelope.safeParse(json);
  if (!envelope.success) return { kind: 'malformed', problem: problemOf(envelope.error) };
  const eventType = envelope.data.eventType ?? envelope.data.notificationType;
  if (eventType === undefined) return { kind: 'malformed', problem: 'no eventType' };

  if (eventType === 'Bounce') {
    const parsed = z.object({ bounce: Bounce }).safeParse(json);
    if (!parsed.success) return { kind: 'malformed', problem: problemOf(parsed.error) };
    const { bounceType, bounceSubType, bouncedRecipients, timestamp } = parsed.data.bounce;
    const kind = `${bounceType}/${bounceSubType ?? 'unspecified'}`;
    return {
      kind: 'feedback',
      eventType,
      feedback: bouncedRecipients.map((r) => ({
        email: r.emailAddress,
        reason: 'bounce',
        detail: (r.diagnosticCode ? `${kind}: ${r.diagnosticCode}` : kind).slice(0, DETAIL_MAX),
        at: timestamp,
        suppresses: suppressingBounce(bounceType),
      })),
    };
  }
  if (eventType === 'Complaint') {
    const parsed = z.object({ complaint: Complaint }).safeParse(json);
    if (!parsed.success) return { kind: 'malformed', problem: problemOf(parsed.error) };
    const { complainedRecipients, complaintFeedbackType, complaintSubType, timestamp } = parsed.data.complaint;
    const detail = [`complaint/${complaintFeedbackType ?? 'unspecified'}`, complaintSubType].filter(Boolean).join(' ');
    return {
      kind: 'feedback',
      eventType,
      feedback: complainedRecipients.map((r) => ({
        email: r.emailAddress,
        reason: 'complaint',
        detail,
        at: timestamp,
        suppresses: suppressingComplaint(complaintFeedbackType),
      })),
    };
  }
  return { kind: 'ignored', eventType };
};

/**
 * An address as logs show it: the first character of the local part and the domain, plus the
 * SHA-256 of the normalised address (the same hash the sign-in limits key on), so an operator who
 * knows the address can find its lines (`printf %s jane@example.com | sha256sum`) while the log
 * group does not hold the address list. The full address is in the suppression item.
 */
export const maskAddress = (email: string): { address: string; addressSha256: string } => {
  const [local = '', domain = ''] = normaliseEmail(email).split(/@(?=[^@]*$)/);
  return { address: `${local.slice(0, 1)}…@${domain}`, addressSha256: accountSubject(email) };
};

/** Diagnostic codes often quote the address (`550 5.1.1 <jane@example.com>... User`): logs keep only its domain. */
const redactAddresses = (text: string): string => text.replace(/[^\s<>"'(),;:[\]]+@(?=[^\s<>"'(),;:[\]]+)/g, '…@');

/**
 * Applies one SNS message from SES: suppresses what must be, then counts each recipient
 * (MailBounced, MailComplained) and logs it. A message that cannot be read is logged and dropped:
 * retrying would read it the same way. A DynamoDB failure throws, so Lambda retries the
 * invocation; `suppress` is idempotent, and the metrics are written only once all succeeded.
 */
export const applySesEvent = async (db: Db, message: string, context: Record<string, unknown> = {}): Promise<void> => {
  const event = parseSesEvent(message);
  if (event.kind === 'malformed') {
    log.error('SES event dropped: malformed', new Error(event.problem), context);
    return;
  }
  if (event.kind === 'ignored') return;
  await Promise.all(event.feedback.filter((f) => f.suppresses).map((f) => suppress(db, f)));
  for (const f of event.feedback) {
    recordEvent(f.reason === 'bounce' ? EVENT_METRICS.mailBounced : EVENT_METRICS.mailComplained);
    log.info(f.suppresses ? 'mail address suppressed' : 'mail event, address not suppressed', {
      ...context,
      ...maskAddress(f.email),
      reason: f.reason,
      detail: redactAddresses(f.detail),
      at: f.at,
    });
  }
};
