import { hashOpaqueToken } from '#lib/auth/opaque-tokens.ts';
import { isoMillis } from '#lib/core/time.ts';
import { readTogether } from '#lib/db/batch-read.ts';
import type { Db } from '#lib/db/service.ts';
import { pathParams } from '#lib/http/params.ts';
import type { StaticAnswer } from '#lib/http/static.ts';
import { oneLine } from '#lib/mail/safety.ts';
import { humanUtc, roleName } from '#lib/mail/templates.ts';
import { field, MIN_LENGTH } from './forms.ts';
import { html, renderPage } from './render.ts';

const UNAVAILABLE = renderPage({
  title: 'This invitation cannot be used',
  main: `      <p>The link may be incomplete, or the invitation was answered, withdrawn or has expired.</p>
      <p>Ask the person who invited you to send it again.</p>`,
});

/** The path's UUID as the API reads it, or null: a malformed one gets the same page as an unknown one. */
const uuidOrNull = (raw: string | undefined): string | null => {
  try {
    return pathParams({ uuid: raw }).uuid;
  } catch {
    return null;
  }
};

/**
 * GET /invites/{uuid}?token=…: what the invitation is, then sign-in or sign-up and the answer
 * (the script). The details show only with the link's live invitation token for this invite: the
 * token, not the UUID, is the e-mail's secret. One BatchGetItem for the invite and the token, one
 * for the team and the inviter; nothing is written (the token is used up only by sign-up).
 * Anything else — no such invite, a used or foreign token, an answered or expired invite, a
 * deleted team — is one page that tells nothing about which.
 */
export const invitePage = async (db: Db, rawUuid: string | undefined, token: string | undefined, now: Date): Promise<StaticAnswer> => {
  const inviteUuid = uuidOrNull(rawUuid);
  if (!inviteUuid || !token) return UNAVAILABLE;
  const [invite, item] = await readTogether(db, [
    [db.entities.invite, { inviteUuid }],
    [db.entities.accountToken, { tokenHash: hashOpaqueToken(token) }],
  ] as const);
  const live =
    invite &&
    item?.purpose === 'invitation' &&
    item.inviteUuid === inviteUuid &&
    item.email === invite.email &&
    item.expiresAt > now.getTime() &&
    (invite.status === 'PENDING' || invite.status === 'EXPIRED') &&
    invite.expiresAt > isoMillis(now);
  if (!live) return UNAVAILABLE;
  const [team, inviter] = await readTogether(db, [
    [db.entities.team, { teamId: invite.teamId }],
    [db.entities.user, { userUuid: invite.invitedByUuid }],
  ] as const);
  if (!team) return UNAVAILABLE;
  // One line, without bidirectional overrides or invisible characters, as in the e-mails: a name
  // must not disguise itself or what follows it.
  const teamName = oneLine(team.name);
  const by = inviter ? oneLine(`${inviter.firstName} ${inviter.lastName}`) : 'A former member';
  return renderPage({
    title: `Join ${teamName}`,
    data: { page: 'invite', invite: inviteUuid, email: invite.email, team: teamName },
    main: `      <dl class="facts">
        <dt>Team</dt><dd id="team-name">${html(teamName)}</dd>
        <dt>Invited by</dt><dd>${html(by)}</dd>
        <dt>Role</dt><dd>${roleName(invite.role)}</dd>
        <dt>For</dt><dd>${html(invite.email)}</dd>
        <dt>Expires</dt><dd><time datetime="${html(invite.expiresAt)}">${html(humanUtc(invite.expiresAt))}</time></dd>
      </dl>
      <div id="auth" class="columns">
        <form id="signin" method="post" novalidate>
          <h2>I have an account</h2>
          ${field('signin-email', 'E-mail', 'email', 'email', ` value="${html(invite.email)}"`)}
          ${field('signin-password', 'Password', 'password', 'current-password')}
          <button type="submit">Sign in</button>
        </form>
        <form id="signup" method="post" novalidate>
          <h2>I am new to Roster</h2>
          ${field('signup-first', 'First name', 'text', 'given-name', ' maxlength="100"')}
          ${field('signup-last', 'Last name', 'text', 'family-name', ' maxlength="100"')}
          ${field('signup-email', 'E-mail', 'email', 'email', ` value="${html(invite.email)}" readonly`)}
          ${field('signup-password', 'Password', 'password', 'new-password', MIN_LENGTH)}
          <button type="submit">Sign up</button>
        </form>
      </div>
      <div id="answer" hidden>
        <p id="signed-in"></p>
        <button type="button" id="accept">Accept</button>
        <button type="button" id="decline" class="secondary">Decline</button>
      </div>
      <button type="button" id="resend" hidden>Send the confirmation e-mail again</button>`,
  });
};
