/** What each outbox message calls for now (docs/mail.md): the e-mail to send, or why none is sent any more. */
import { type TokenFor } from '#lib/auth/account-tokens.ts';
import { newOpaqueToken } from '#lib/auth/opaque-tokens.ts';
import { config } from '#lib/core/config.ts';
import { isoMillis } from '#lib/core/time.ts';
import type { Db } from '#lib/db/service.ts';
import {
  renderAddressInUse,
  renderEmailChange,
  renderEmailChangeNotice,
  renderFactorAdded,
  renderIdentitiesChanged,
  renderIdentityRefused,
  renderRecoveryCodeUsed,
  renderRecovery,
  renderVerification,
  resetLink,
  verifyLink,
  withToken,
} from './account-mail.ts';
import { isBlocked, unsubscribeUrl } from './blocks.ts';
import { renderDeclined } from './declined.ts';
import { inviteLink, renderInvitation } from './invitation.ts';
import { type OutboxRef } from './outbox-ref.ts';
import { checkMessage, MailRefusedError } from './safety.ts';
import { isSuppressed } from './suppression.ts';
import type { Rendered } from './templates.ts';
import { renderTransfer, transferEndpoint } from './transfer.ts';

/** The reason a message to an address that bounced or complained ends without a send (lib/mail/suppression.ts). */
export const SUPPRESSED = 'skipped: suppressed address';

/** The reason an invitation or nomination ends without a send: its recipient said no to the team (./blocks.ts). */
export const BLOCKED = 'skipped: the recipient blocked mail from this team';

/**
 * An e-mail to send: its recipient, the token its link carries (made after the claim: none for a
 * decline notice or an e-mail change notice), and its parts, rendered with that token.
 */
interface Mail {
  to: string;
  token?: TokenFor;
  /** Invitations and nominations: the team whose mail the one-click link stops (./blocks.ts). */
  unsubscribe?: { teamId: number };
  /** The parts, with the link's token and the unsubscribe link (empty without one). */
  render: (token: string, unsubscribe: string) => Rendered;
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
  // An invitation goes to the invitee: whether that address is suppressed, or blocked this team, is read beside the rest.
  const [{ data: team }, inviter, suppressed, blocked] = await Promise.all([
    db.entities.team.get({ teamId: invite.teamId }).go({ consistent: true }),
    account(db, invite.invitedByUuid),
    message.kind === 'invitation' ? isSuppressed(db, invite.email) : undefined,
    message.kind === 'invitation' ? isBlocked(db, invite.email, invite.teamId) : false,
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
  if (blocked) return { notSent: BLOCKED };
  if (invite.expiresAt <= isoMillis(now)) return { notSent: 'skipped: the invite has expired' };
  const to = invite.email;
  return {
    to,
    suppressed,
    // Signing up from the link proves the address (docs/accounts.md): the token is the invitee's, for as long as the invite lives.
    token: { purpose: 'invitation', email: to, inviteUuid: invite.inviteUuid, expiresAt: invite.expiresAt },
    unsubscribe: { teamId: invite.teamId },
    render: (token, unsubscribe) =>
      renderInvitation({
        to,
        teamName: team.name,
        inviterName,
        inviterEmail: inviter.email,
        role: invite.role,
        expiresAt: invite.expiresAt,
        link: withToken(inviteLink(invite.inviteUuid), token),
        unsubscribe,
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
  if (await isBlocked(db, to, teamId)) return { notSent: BLOCKED };
  return {
    to,
    unsubscribe: { teamId },
    render: (_, unsubscribe) =>
      renderTransfer({
        to,
        name: fullName(nominee),
        teamName: team.name,
        nominatorName: fullName(nominator),
        nominatorEmail: nominator.email,
        expiresAt: transfer.expiresAt,
        acceptUrl: transferEndpoint(team.slug, 'accept'),
        declineUrl: transferEndpoint(team.slug, 'decline'),
        unsubscribe,
      }),
  };
};

/** An account e-mail as the account is now (docs/accounts.md), or why it no longer applies. */
const accountMail = async (db: Db, message: Exclude<OutboxRef, { inviteUuid: string } | { kind: 'transfer' }>): Promise<Plan> => {
  const to = message.address;
  if (!('userUuid' in message)) {
    // The request wrote the same message for a known address and an unknown one: only here does it tell.
    const claim = (await db.entities.emailClaim.get({ email: to }).go({ consistent: true })).data;
    const user = claim && (await account(db, claim.userUuid));
    if (!user || user.email !== to) return { notSent: 'skipped: no account has this address' };
    // The account's name only once the address is confirmed: an unconfirmed account's names are a stranger's choice.
    if (message.kind === 'address_in_use')
      return { to, render: () => renderAddressInUse({ to, name: user.emailConfirmedAt === undefined ? '' : fullName(user) }) };
    if (message.kind === 'confirmation') {
      if (user.emailConfirmedAt !== undefined) return { notSent: 'skipped: the address is already confirmed' };
      return {
        to,
        token: { purpose: 'verification', email: to, user },
        render: (token) => renderVerification({ to, name: fullName(user), link: verifyLink(token), minutes: config.verifyTokenMinutes }),
      };
    }
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
    case 'recovery_code_used': {
      if (user.email !== to) return { notSent: 'skipped: the account has another address now' };
      const left = (await db.entities.recoveryCodes.get({ userUuid: user.userUuid }).go({ consistent: true })).data?.hashes?.length ?? 0;
      return { to, render: () => renderRecoveryCodeUsed({ to, name, left }) };
    }
    case 'factor_added': {
      if (user.email !== to) return { notSent: 'skipped: the account has another address now' };
      const factors = (user.factors ?? [])
        .filter((f) => f.status === 'verified')
        .map((f) => {
          const kind = f.type === 'webauthn' ? 'passkey' : 'authenticator app';
          return f.name ? `${f.name} (${kind})` : kind;
        })
        .join(', ');
      return { to, render: () => renderFactorAdded({ to, name, factors: factors || 'none' }) };
    }
    case 'identities_changed': {
      if (user.email !== to) return { notSent: 'skipped: the account has another address now' };
      const ways = [...(user.passwordHash !== '' ? ['password'] : []), ...(user.identities ?? []).map((i) => `${i.provider} (${i.email})`)];
      return { to, render: () => renderIdentitiesChanged({ to, name, ways: ways.join(', ') || 'none' }) };
    }
    case 'identity_refused':
      if (user.email !== to) return { notSent: 'skipped: the account has another address now' };
      // An unconfirmed account's names are a stranger's choice, as for address_in_use.
      return { to, render: () => renderIdentityRefused({ to, name: user.emailConfirmedAt === undefined ? '' : name }) };
  }
};

export const plan = async (db: Db, message: OutboxRef, now: Date): Promise<Plan> => {
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
    const preview = mail.render(newOpaqueToken(), unsubscribeUrl(newOpaqueToken()));
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
