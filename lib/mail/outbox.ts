import type { Db } from '../db/service.ts';
import { isConditionFailure } from '../db/transactions.ts';
import { log } from '../log.ts';
import { renderDeclined } from './declined.ts';
import { inviteLink, renderInvitation } from './invitation.ts';
import type { Rendered } from './templates.ts';
import { MailRefusedError, type Mailer } from './transports.ts';

/**
 * Delivery of one outbox message (docs/mail.md, "Outbox"). The table's stream hands each new
 * message to the mailer function, which calls deliver(); a stream record may arrive more than once
 * and several mailers may see the same message, so the message's own status decides who sends:
 *
 * - claim: one conditional update moves it from PENDING (or from SENDING whose lease has run out)
 *   to SENDING, with a lease and one more attempt. Only the mailer whose update succeeded sends.
 * - SENT or FAILED already: nothing to do. SENDING under another live lease: LeasedError (retry
 *   later; by then it is SENT, or the lease has run out and the retry claims it).
 * - sent: SENT with sentAt. Refused (MailRefusedError) or skipped: FAILED with the reason, no throw.
 * - any other send error: the claim is released (PENDING again, the error noted) and deliver throws,
 *   so the stream retries the record.
 */

/** How long a claim lasts: longer than one send may take (SMTP_SEND_TIMEOUT_MS, SES's three attempts). */
export const LEASE_MS = 60_000;

/** Another mailer holds a live lease on the message: not sent by us, worth retrying after the lease. */
export class LeasedError extends Error {
  override readonly name = 'LeasedError';
}

export type Delivery =
  /** The e-mail was accepted by the transport; the message is SENT. */
  | { outcome: 'sent' }
  /** Not sent, for good: the message is FAILED with `reason` (`skipped: …` or the refusal). */
  | { outcome: 'failed'; reason: string }
  /** The message was SENT or FAILED before this call (a duplicate record), or does not exist. */
  | { outcome: 'done-before' };

export interface DeliverOptions {
  leaseMs?: number;
}

const isoMillis = (d: Date): string => d.toISOString();

/**
 * Sends outbox message `messageId` unless it was handled already. Resolves with what happened;
 * rejects (after releasing the claim) when the send failed in a way worth retrying, and with
 * LeasedError when another mailer is sending it right now.
 */
export const deliver = async (db: Db, mailer: Mailer, messageId: string, now: Date = new Date(), options: DeliverOptions = {}): Promise<Delivery> => {
  const nowMs = now.getTime();
  const leaseUntil = nowMs + (options.leaseMs ?? LEASE_MS);
  const outbox = db.entities.outboxMessage;

  let message;
  try {
    message = (
      await outbox
        .patch({ messageId })
        .set({ status: 'SENDING', leaseUntil })
        .add({ attempts: 1 })
        .where((a, { eq, lt }) => `${eq(a.status, 'PENDING')} OR (${eq(a.status, 'SENDING')} AND ${lt(a.leaseUntil, nowMs)})`)
        .go({ response: 'all_new' })
    ).data;
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    // Missing, finished, or leased by another mailer: read which (consistently, the claim just lost).
    const current = (await outbox.get({ messageId }).go({ consistent: true })).data;
    if (current?.status === 'SENDING') throw new LeasedError(`message ${messageId} is being sent by another mailer`);
    if (!current) log.info('outbox message not found', { messageId });
    return { outcome: 'done-before' };
  }

  // Each end is conditioned on our own claim: a mailer whose lease ran out does not overwrite the next one's.
  type Outcome = Parameters<ReturnType<typeof outbox.patch>['set']>[0];
  const finish = async (set: Outcome, remove: ('leaseUntil' | 'error')[]) => {
    try {
      await outbox
        .patch({ messageId })
        .set(set)
        .remove(remove)
        .where((a, { eq }) => `${eq(a.status, 'SENDING')} AND ${eq(a.leaseUntil, leaseUntil)}`)
        .go();
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      log.info('outbox claim lost before the outcome was recorded', { messageId });
    }
  };
  const fail = async (reason: string): Promise<Delivery> => {
    await finish({ status: 'FAILED', error: reason }, ['leaseUntil']);
    log.info('outbox message not sent', { messageId, kind: message.kind, reason });
    return { outcome: 'failed', reason };
  };

  const invite = (await db.entities.invite.get({ inviteUuid: message.inviteUuid }).go({ consistent: true })).data;
  if (!invite) return fail('skipped: the invite no longer exists');
  const team = (await db.entities.team.get({ teamId: invite.teamId }).go({ consistent: true })).data;
  if (!team) return fail('skipped: the team no longer exists');
  const inviter = (await db.entities.user.get({ userUuid: invite.invitedByUuid }).go({ consistent: true })).data;
  if (!inviter) return fail('skipped: the inviter no longer exists');
  const inviterName = `${inviter.firstName} ${inviter.lastName}`.trim();

  let to: string;
  let rendered: Rendered;
  try {
    if (message.kind === 'invitation') {
      if (invite.status !== 'PENDING') return await fail(`skipped: the invite is ${invite.status}`);
      if (invite.expiresAt <= isoMillis(now)) return await fail('skipped: the invite has expired');
      to = invite.email;
      rendered = renderInvitation({
        to,
        teamName: team.name,
        inviterName,
        inviterEmail: inviter.email,
        role: invite.role,
        expiresAt: invite.expiresAt,
        link: inviteLink(invite.inviteUuid),
      });
    } else {
      to = inviter.email;
      rendered = renderDeclined({
        to,
        inviterName,
        inviteeEmail: invite.email,
        teamName: team.name,
        role: invite.role,
        declinedAt: message.createdAt,
      });
    }
  } catch (error) {
    // A template or value that cannot be rendered now will not render on a retry either.
    return fail(`not rendered: ${error instanceof Error ? error.message : String(error)}`);
  }

  try {
    await mailer.send({ to, ...rendered, messageId });
  } catch (error) {
    if (error instanceof MailRefusedError) return fail(`refused: ${error.message}`);
    const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    // Back to PENDING at once, so the retry need not wait for the lease to run out.
    await finish({ status: 'PENDING', error: detail.slice(0, 500) }, ['leaseUntil']);
    throw error;
  }
  await finish({ status: 'SENT', sentAt: isoMillis(new Date()) }, ['leaseUntil', 'error']);
  log.info('outbox message sent', { messageId, kind: message.kind, transport: mailer.kind, attempts: message.attempts });
  return { outcome: 'sent' };
};
