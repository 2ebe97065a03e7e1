/**
 * Delivery of one outbox message (docs/mail.md, "Outbox"). The table's stream (through its reader
 * and the mail queue, docs/background.md) hands each new message to the mailer function, and the
 * outbox sweeper (./outbox-sweep.ts) hands over those left behind; either may do so more than once, and at the same time, so the message's own
 * status decides who sends:
 *
 * - read: the invite, its team and inviter (or the account) as they are now, and whether the
 *   address is suppressed. A message that no longer calls for mail ends without a claim: FAILED
 *   (never sent), or SENT marked `unconfirmed` when an earlier attempt may have sent it.
 * - claim: one conditional update, PENDING (or SENDING whose lease has run out) → SENDING with a
 *   lease and one more attempt. Only the mailer whose update succeeded sends, right away: nothing
 *   but the token of the mail's link (made now, so its value exists only in the e-mail) and the
 *   send happen under a claim, so a lease that runs out means a send may have happened.
 * - sent: SENT, the write retried until the deadline. Send failed: PENDING again, and it throws.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { issueToken } from '#lib/auth/account-tokens.ts';
import { config } from '#lib/core/config.ts';
import { AppError } from '#lib/core/errors.ts';
import { log } from '#lib/core/log.ts';
import { EVENT_METRICS } from '#lib/core/metric-names.ts';
import { recordEvent } from '#lib/core/metrics.ts';
import { isoMillis } from '#lib/core/time.ts';
import { type OutboxKind, randomDueShard } from '#lib/db/entities/outbox.ts';
import type { Db } from '#lib/db/service.ts';
import { isConditionFailure } from '#lib/db/transactions.ts';
import { type AccountKind, takeAccountMail } from '#lib/limits/recipient-mail.ts';
import { type BucketToken, giveBack } from '#lib/limits/token-bucket.ts';
import { unsubscribeUrl } from './blocks.ts';
import type { OutboxRef } from './outbox-ref.ts';
import { SUPPRESSED, plan } from './plans.ts';
import type { Mailer } from './transports.ts';

export type Delivery =
  /** The transport accepted it; the message is SENT. */
  | { outcome: 'sent' }
  /**
   * The transport accepted it, but SENT could not be written by the deadline: the message stays
   * SENDING until its lease runs out, and is then sent again (the one duplicate at-least-once allows).
   */
  | { outcome: 'sent-unrecorded' }
  /** Not sent, for good: the message is FAILED with `reason` (`skipped: …`, `refused: …`, `not rendered: …`). */
  | { outcome: 'failed'; reason: string }
  /** Not sent now, but an earlier attempt may have sent it: SENT, with `reason` (`unconfirmed: …`) in `error`. */
  | { outcome: 'unconfirmed'; reason: string }
  /** Another mailer holds a live lease: it finishes, or its lease runs out and the sweeper takes over. */
  | { outcome: 'leased' }
  /** The message was SENT or FAILED before this call (a duplicate record), or does not exist. */
  | { outcome: 'done-before' };

export interface DeliverOptions {
  /** Default OUTBOX_LEASE_MS. Longer than one send may take (SMTP_SEND_TIMEOUT_MS, SES's three attempts). */
  leaseMs?: number;
  /** Epoch milliseconds by which deliver should return (the invocation's end); default the lease's end. */
  deadline?: number;
}

/** The gsi3 entry and the lease: removed when a message ends. */
const UNFINISHED = ['leaseUntil', 'dueAt', 'dueShard'] as const;

/** Why an account e-mail was not sent: its recipient's allowance was spent (lib/limits/recipient-mail.ts). */
export const OVER_ALLOWANCE = "skipped: the recipient's allowance for this kind of e-mail is spent";

/** Every account kind, so that the compiler finds one left out. */
const ACCOUNT_KIND: Record<AccountKind, true> = {
  verification: true,
  confirmation: true,
  recovery: true,
  email_change: true,
  email_change_notice: true,
  address_in_use: true,
  recovery_code_used: true,
  factor_added: true,
  identities_changed: true,
  identity_refused: true,
};
const isAccountKind = (kind: OutboxKind): kind is AccountKind => kind in ACCOUNT_KIND;

/**
 * Charges the recipient's allowance for an account e-mail, under the claim; a send that fails
 * gives the tokens back (deliver), so a retry is not refused for its own first try. Invitations
 * and nominations were charged by their request. Answers the tokens taken, or OVER_ALLOWANCE when
 * spent; throws a 503 when DynamoDB fails (the claim is released and the message retried).
 */
const chargeRecipient = async (db: Db, message: OutboxRef, to: string, now: Date): Promise<BucketToken[] | typeof OVER_ALLOWANCE> => {
  if (!isAccountKind(message.kind)) return [];
  try {
    return await takeAccountMail(db, message.kind, to, now);
  } catch (error) {
    if (error instanceof AppError && error.code === 'rate_limited') return OVER_ALLOWANCE;
    throw error;
  }
};

/** What a claim must still have beyond the transport's longest send for the send to start. */
const LEASE_MARGIN_MS = 1000;

/** The first and the longest pause between tries of the SENT write. */
const RECORD_RETRY_MS = [100, 1000] as const;

/**
 * Sends outbox message `message` unless it was handled already or no longer calls for mail, and
 * says what happened. Rejects when a read, the claim or the send failed in a way worth retrying
 * (a failed send releases the claim first).
 */
export const deliver = async (
  db: Db,
  mailer: Mailer,
  message: OutboxRef,
  now: Date = new Date(),
  options: DeliverOptions = {},
): Promise<Delivery> => {
  const { messageId, kind } = message;
  const outbox = db.entities.outboxMessage;
  const nowMs = now.getTime();

  /** After a lost condition: SENDING under a live lease, or ended (or gone). */
  const whoHasIt = async (): Promise<Delivery> => {
    const current = (await outbox.get({ messageId }).go({ consistent: true })).data;
    if (current?.status === 'SENDING') return { outcome: 'leased' };
    if (!current) log.info('outbox message not found', { messageId });
    return { outcome: 'done-before' };
  };

  const next = await plan(db, message, now);
  if ('notSent' in next) {
    const reason = next.notSent;
    // Never claimed by anyone, or claimed and released after a failed send: certainly never sent.
    try {
      await outbox
        .patch({ messageId })
        .set({ status: 'FAILED', error: reason })
        .remove([...UNFINISHED])
        .where((a, op) => `(${op.eq(a.status, 'PENDING')} AND ${op.notExists(a.maybeSent)})`)
        .go();
      log.info('outbox message not sent', { messageId, kind, reason });
      if (reason === SUPPRESSED) recordEvent(EVENT_METRICS.mailSuppressed);
      return { outcome: 'failed', reason };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    // An earlier attempt's outcome was lost: it may have sent this, so it must not read "never sent".
    const unconfirmed = `unconfirmed: an earlier attempt may have sent it; not sent again: ${reason}`;
    try {
      await outbox
        .patch({ messageId })
        .set({ status: 'SENT', error: unconfirmed, maybeSent: true })
        .remove([...UNFINISHED])
        .where((a, op) => `(${op.eq(a.status, 'PENDING')} OR (${op.eq(a.status, 'SENDING')} AND ${op.lt(a.leaseUntil, nowMs)}))`)
        .go();
      log.info('outbox message not sent again', { messageId, kind, reason: unconfirmed });
      if (reason === SUPPRESSED) recordEvent(EVENT_METRICS.mailSuppressed);
      return { outcome: 'unconfirmed', reason: unconfirmed };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    return whoHasIt();
  }

  const leaseMs = options.leaseMs ?? config.outboxLeaseMs;
  const leaseUntil = nowMs + leaseMs;
  // The claim's own clock: `now` may be given (tests, the sweeper's run start), the lease runs in real time.
  const claimedAt = Date.now();
  let before;
  try {
    before = (
      await outbox
        .patch({ messageId })
        .set({ status: 'SENDING', leaseUntil, dueAt: isoMillis(new Date(leaseUntil)), dueShard: randomDueShard() })
        .add({ attempts: 1 })
        .where((a, op) => `(${op.eq(a.status, 'PENDING')} OR (${op.eq(a.status, 'SENDING')} AND ${op.lt(a.leaseUntil, nowMs)}))`)
        .go({ response: 'all_old' })
    ).data;
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    return whoHasIt();
  }
  // Taken over from a lease that ran out, or flagged so before: an earlier attempt may have sent it.
  const maybeSent = before.status === 'SENDING' || before.maybeSent === true;
  const attempts = (before.attempts ?? 0) + 1;
  /** Writes that hold only while the claim is still ours: a mailer that overran its lease cannot overwrite the next one's. */
  const ours = (set: Parameters<ReturnType<typeof outbox.patch>['set']>[0], remove: ('leaseUntil' | 'dueAt' | 'dueShard' | 'error')[]) =>
    outbox
      .patch({ messageId })
      .set(set)
      .remove(remove)
      .where((a, op) => `${op.eq(a.status, 'SENDING')} AND ${op.eq(a.leaseUntil, leaseUntil)}`)
      .go();

  let spent: string | undefined;
  let charged: BucketToken[] = [];
  try {
    const charge = await chargeRecipient(db, message, next.to, now);
    if (charge === OVER_ALLOWANCE) spent = charge;
    else charged = charge;
    if (!spent) {
      // The links' tokens exist from now on, in this e-mail only; a later attempt makes others.
      const [token, stop] = await Promise.all([
        next.token ? issueToken(db, next.token, now) : '',
        next.unsubscribe ? issueToken(db, { purpose: 'unsubscribe', email: next.to, teamId: next.unsubscribe.teamId }, now) : undefined,
      ]);
      const unsubscribe = stop === undefined ? undefined : unsubscribeUrl(stop);
      // Sent only while the claim outlasts the longest send: a send never outlives its lease, so
      // no other mailer can claim the message while this one may still be sending it.
      if (leaseMs - (Date.now() - claimedAt) < mailer.maxSendMs + LEASE_MARGIN_MS)
        throw new Error('the claim has too little time left to send');
      await mailer.send({ to: next.to, ...next.render(token, unsubscribe ?? ''), messageId, ...(unsubscribe ? { unsubscribe } : {}) });
    }
  } catch (error) {
    // Not sent (as far as anyone can tell): the retry must find the allowance as it was.
    await Promise.all(charged.map((token) => giveBack(db, token)));
    const detail = (error instanceof Error ? `${error.name}: ${error.message}` : String(error)).slice(0, 500);
    // PENDING again and due now, so the stream's retry need not wait for the lease; the flag stays.
    try {
      await ours(
        { status: 'PENDING', error: detail, dueAt: isoMillis(new Date()), dueShard: randomDueShard(), ...(maybeSent ? { maybeSent } : {}) },
        ['leaseUntil'],
      );
    } catch (release) {
      // The claim stays until its lease runs out; the sweeper then takes the message over.
      log.error('outbox claim not released after a failed send', release, { messageId });
    }
    throw error;
  }
  if (spent) {
    // Spent: never sent by this attempt. An earlier attempt may have sent it (maybeSent): SENT, unconfirmed.
    const reason = maybeSent ? `unconfirmed: an earlier attempt may have sent it; not sent again: ${spent}` : spent;
    try {
      await ours({ status: maybeSent ? 'SENT' : 'FAILED', error: reason, ...(maybeSent ? { maybeSent } : {}) }, [...UNFINISHED]);
    } catch (error) {
      // Lost the claim meanwhile: whoever holds it now decides.
      if (!isConditionFailure(error)) throw error;
      return whoHasIt();
    }
    log.info('outbox message not sent', { messageId, kind, reason });
    return maybeSent ? { outcome: 'unconfirmed', reason } : { outcome: 'failed', reason };
  }

  recordEvent(EVENT_METRICS.outboxLag, Date.now() - Date.parse(message.createdAt));
  if (kind === 'invitation') recordEvent(EVENT_METRICS.invitesSent);

  // The e-mail is out: SENT must land, or the message is sent again after its lease. Retried while there is time.
  const deadline = options.deadline ?? leaseUntil;
  const sent = { status: 'SENT' as const, sentAt: isoMillis(new Date()), ...(maybeSent ? { maybeSent } : {}) };
  for (let pause: number = RECORD_RETRY_MS[0]; ; pause = Math.min(pause * 2, RECORD_RETRY_MS[1])) {
    try {
      await ours(sent, [...UNFINISHED, 'error']);
      break;
    } catch (error) {
      const lost = isConditionFailure(error);
      // The condition also fails when an earlier try (ours, or the SDK's) landed and only its answer
      // was lost; if that cannot be read now, it counts as not landed.
      if (
        lost &&
        (
          await outbox
            .get({ messageId })
            .go({ consistent: true })
            .catch(() => undefined)
        )?.data?.sentAt === sent.sentAt
      )
        break;
      if (lost || Date.now() + pause > deadline) {
        log.error('outbox message sent, but SENT was not recorded: it will be sent again', error, {
          messageId,
          kind,
          attempts,
          claimLost: lost,
        });
        return { outcome: 'sent-unrecorded' };
      }
      await sleep(pause);
    }
  }
  log.info('outbox message sent', { messageId, kind, transport: mailer.kind, attempts, ...(maybeSent ? { maybeSent } : {}) });
  return { outcome: 'sent' };
};
