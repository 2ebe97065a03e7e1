import { setTimeout as sleep } from 'node:timers/promises';
import { issueToken, type TokenFor } from '../account-tokens.ts';
import { newOpaqueToken } from '../auth/opaque-tokens.ts';
import { config } from '../config.ts';
import { OUTBOX_KINDS, type OutboxKind, randomDueShard } from '../db/entities/outbox.ts';
import type { Db } from '../db/service.ts';
import { isConditionFailure } from '../db/transactions.ts';
import { log } from '../log.ts';
import { EVENT_METRICS } from '../metric-names.ts';
import { recordEvent } from '../metrics.ts';
import { isoMillis } from '../time.ts';
import {
  renderEmailChange,
  renderEmailChangeNotice,
  renderRecovery,
  renderVerification,
  resetLink,
  verifyLink,
  withToken,
} from './account-mail.ts';
import { renderDeclined } from './declined.ts';
import { inviteLink, renderInvitation } from './invitation.ts';
import { renderTransfer, transferEndpoint } from './transfer.ts';
import { checkMessage, MailRefusedError } from './safety.ts';
import { isSuppressed } from './suppression.ts';
import type { Rendered } from './templates.ts';
import type { Mailer } from './transports.ts';

/**
 * Delivery of one outbox message (docs/mail.md, "Outbox"). The table's stream hands each new
 * message to the mailer function, and the outbox sweeper (./outbox-sweep.ts) hands over those the
 * stream left behind; either may do so more than once, and at the same time, so the message's own
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

/** What a mailer knows of a message before it claims it: the part that never changes, in the stream's image and in gsi3. */
export type OutboxRef = { messageId: string; createdAt: string } & (
  | { kind: 'invitation' | 'declined'; inviteUuid: string }
  | { kind: 'verification' | 'email_change' | 'email_change_notice'; userUuid: string; address: string }
  | { kind: 'recovery'; address: string }
  | { kind: 'transfer'; teamId: number; transferId: string }
);

/** A message's stored attributes, as the stream's image or a gsi3 Query has them. */
export interface OutboxFields {
  messageId?: string | undefined;
  kind?: string | undefined;
  createdAt?: string | undefined;
  inviteUuid?: string | undefined;
  userUuid?: string | undefined;
  address?: string | undefined;
  teamId?: number | undefined;
  transferId?: string | undefined;
}

const isKind = (kind: string | undefined): kind is OutboxKind => (OUTBOX_KINDS as readonly (string | undefined)[]).includes(kind);

/** The ref of a stored message; undefined when it lacks what its kind needs (nothing could be sent for it). */
export const outboxRefOf = ({
  messageId,
  kind,
  createdAt,
  inviteUuid,
  userUuid,
  address,
  teamId,
  transferId,
}: OutboxFields): OutboxRef | undefined => {
  if (!messageId || !createdAt || !isKind(kind)) return undefined;
  switch (kind) {
    case 'invitation':
    case 'declined':
      return inviteUuid ? { messageId, createdAt, kind, inviteUuid } : undefined;
    case 'recovery':
      return address ? { messageId, createdAt, kind, address } : undefined;
    case 'transfer':
      return teamId !== undefined && transferId ? { messageId, createdAt, kind, teamId, transferId } : undefined;
    default:
      return userUuid && address ? { messageId, createdAt, kind, userUuid, address } : undefined;
  }
};

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

/** The first and the longest pause between tries of the SENT write. */
const RECORD_RETRY_MS = [100, 1000] as const;

/** The reason a message to an address that bounced or complained ends without a send (lib/mail/suppression.ts). */
const SUPPRESSED = 'skipped: suppressed address';

/**
 * An e-mail to send: its recipient, the token its link carries (made after the claim: none for a
 * decline notice or an e-mail change notice), and its parts, rendered with that token.
 */
interface Mail {
  to: string;
  token?: TokenFor;
  render: (token: string) => Rendered;
  /** Whether `to` is suppressed, when it was read beside the rest. */
  suppressed?: boolean;
}

/** What the message calls for now: an e-mail, or an end without one and why. */
type Plan = Mail | { notSent: string };

const account = async (db: Db, userUuid: string) => (await db.entities.user.get({ userUuid }).go({ consistent: true })).data;

const fullName = (u: { firstName: string; lastName: string }): string => `${u.firstName} ${u.lastName}`.trim();

/** The invitation or decline notice of an invite as it is now, or why there is none. */
const inviteMail = async (db: Db, message: Extract<OutboxRef, { inviteUuid: string }>, now: Date): Promise<Plan> => {
  const invite = (await db.entities.invite.get({ inviteUuid: message.inviteUuid }).go({ consistent: true })).data;
  if (!invite) return { notSent: 'skipped: the invite no longer exists' };
  // An invitation goes to the invitee: whether that address is suppressed is read beside the rest.
  const [{ data: team }, inviter, suppressed] = await Promise.all([
    db.entities.team.get({ teamId: invite.teamId }).go({ consistent: true }),
    account(db, invite.invitedByUuid),
    message.kind === 'invitation' ? isSuppressed(db, invite.email) : undefined,
  ]);
  if (!team) return { notSent: 'skipped: the team no longer exists' };
  if (!inviter) return { notSent: 'skipped: the inviter no longer exists' };
  const inviterName = fullName(inviter);
  if (message.kind === 'declined') {
    const to = inviter.email;
    return {
      to,
      render: () =>
        renderDeclined({
          to,
          inviterName,
          inviteeEmail: invite.email,
          teamName: team.name,
          role: invite.role,
          declinedAt: message.createdAt,
        }),
    };
  }
  if (invite.status !== 'PENDING') return { notSent: `skipped: the invite is ${invite.status}` };
  if (invite.expiresAt <= isoMillis(now)) return { notSent: 'skipped: the invite has expired' };
  const to = invite.email;
  return {
    to,
    suppressed,
    // Signing up from the link proves the address (docs/accounts.md): the token is the invitee's, for as long as the invite lives.
    token: { purpose: 'invitation', email: to, inviteUuid: invite.inviteUuid, expiresAt: invite.expiresAt },
    render: (token) =>
      renderInvitation({
        to,
        teamName: team.name,
        inviterName,
        inviterEmail: inviter.email,
        role: invite.role,
        expiresAt: invite.expiresAt,
        link: withToken(inviteLink(invite.inviteUuid), token),
      }),
  };
};

/**
 * The nomination of a member as the team's owner, to the nominee, while that very transfer is still
 * open (not replaced, answered or withdrawn, unexpired): the team's one transfer item, read with the
 * team, then both accounts. Nothing in it carries a token: the nominee answers signed in.
 */
const transferMail = async (db: Db, message: Extract<OutboxRef, { kind: 'transfer' }>, now: Date): Promise<Plan> => {
  const { teamId } = message;
  const [{ data: transfer }, { data: team }] = await Promise.all([
    db.entities.transfer.get({ teamId }).go({ consistent: true }),
    db.entities.team.get({ teamId }).go({ consistent: true }),
  ]);
  if (!team) return { notSent: 'skipped: the team no longer exists' };
  if (transfer?.transferId !== message.transferId) return { notSent: 'skipped: the transfer is no longer open' };
  if (transfer.expiresAt <= isoMillis(now)) return { notSent: 'skipped: the transfer has expired' };
  const [nominee, nominator] = await Promise.all([account(db, transfer.nomineeUserUuid), account(db, transfer.nominatorUserUuid)]);
  if (!nominee) return { notSent: 'skipped: the nominee no longer exists' };
  if (!nominator) return { notSent: 'skipped: the nominating owner no longer exists' };
  const to = nominee.email;
  return {
    to,
    render: () =>
      renderTransfer({
        to,
        name: fullName(nominee),
        teamName: team.name,
        nominatorName: fullName(nominator),
        nominatorEmail: nominator.email,
        expiresAt: transfer.expiresAt,
        acceptUrl: transferEndpoint(team.slug, 'accept'),
        declineUrl: transferEndpoint(team.slug, 'decline'),
      }),
  };
};

/** An account e-mail as the account is now (docs/accounts.md), or why it no longer applies. */
const accountMail = async (db: Db, message: Exclude<OutboxRef, { inviteUuid: string } | { kind: 'transfer' }>): Promise<Plan> => {
  const to = message.address;
  if (message.kind === 'recovery') {
    // The request wrote the same message for a known address and an unknown one: only here does it tell.
    const claim = (await db.entities.emailClaim.get({ email: to }).go({ consistent: true })).data;
    const user = claim && (await account(db, claim.userUuid));
    if (!user || user.email !== to) return { notSent: 'skipped: no account has this address' };
    return {
      to,
      token: { purpose: 'recovery', email: to, user },
      render: (token) => renderRecovery({ to, name: fullName(user), link: resetLink(token), minutes: config.resetTokenMinutes }),
    };
  }
  const user = await account(db, message.userUuid);
  if (!user) return { notSent: 'skipped: the account no longer exists' };
  const name = fullName(user);
  switch (message.kind) {
    case 'verification':
      if (user.email !== to) return { notSent: 'skipped: the account has another address now' };
      if (user.emailConfirmedAt !== undefined) return { notSent: 'skipped: the address is already confirmed' };
      return {
        to,
        token: { purpose: 'verification', email: to, user },
        render: (token) => renderVerification({ to, name, link: verifyLink(token), minutes: config.verifyTokenMinutes }),
      };
    case 'email_change':
      if (user.newEmail !== to) return { notSent: 'skipped: the change to this address is no longer pending' };
      return {
        to,
        token: { purpose: 'email_change', email: to, user },
        render: (token) =>
          renderEmailChange({ to, name, oldEmail: user.email, link: verifyLink(token), minutes: config.verifyTokenMinutes }),
      };
    case 'email_change_notice': {
      // Pending, or made already (then the account has it): either way the old address is told.
      const newEmail = user.newEmail ?? user.email;
      if (newEmail === to) return { notSent: 'skipped: no change of address is pending' };
      return { to, render: () => renderEmailChangeNotice({ to, name, newEmail }) };
    }
  }
};

const plan = async (db: Db, message: OutboxRef, now: Date): Promise<Plan> => {
  // An account message names its recipient: whether it is suppressed is read beside the account.
  const [mail, suppressed] = await Promise.all([
    message.kind === 'transfer'
      ? transferMail(db, message, now)
      : 'inviteUuid' in message
        ? inviteMail(db, message, now)
        : accountMail(db, message),
    'address' in message ? isSuppressed(db, message.address) : undefined,
  ]);
  if ('notSent' in mail) return mail;
  try {
    // Rendered now with a token of the real one's shape, so that what could not be rendered or
    // would be refused is known before the claim; the send renders again with the real token.
    const preview = mail.render(newOpaqueToken());
    // The transport would refuse it the same way; refused before the claim, it is known never sent.
    checkMessage({ to: mail.to, ...preview, messageId: message.messageId });
  } catch (error) {
    if (error instanceof MailRefusedError) return { notSent: `refused: ${error.message}` };
    // A template or value that cannot be rendered now will not render on a retry either.
    return { notSent: `not rendered: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (suppressed ?? mail.suppressed ?? (await isSuppressed(db, mail.to))) return { notSent: SUPPRESSED };
  return mail;
};

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

  const leaseUntil = nowMs + (options.leaseMs ?? config.outboxLeaseMs);
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

  try {
    // The link's token exists from now on, in this e-mail only; a later attempt makes another.
    const token = next.token ? await issueToken(db, next.token, now) : '';
    await mailer.send({ to: next.to, ...next.render(token), messageId });
  } catch (error) {
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
