import { config } from '#lib/core/config.ts';
import { fill, humanUtc, loadTemplates, type Parts, type Rendered, roleName } from './templates.ts';

/** The data an invitation e-mail needs; plain values, so the outbox can store them with the message. */
export interface InvitationData {
  /** The invitee's e-mail address (the recipient). */
  to: string;
  teamName: string;
  /** The inviter's display name; empty falls back to their e-mail address. */
  inviterName: string;
  inviterEmail: string;
  role: string;
  /** ISO date-time; shown as e.g. `Friday, 9 January 2026, 14:05 UTC`. */
  expiresAt: string;
  /** From inviteLink(). */
  link: string;
  /** From unsubscribeUrl() (./blocks.ts): stops this team's invitations to the address. */
  unsubscribe: string;
}

/** The invitee's link: `{PUBLIC_URL}/invites/{uuid}`. */
export const inviteLink = (inviteUuid: string, publicUrl: string = config.publicUrl): string =>
  `${publicUrl.replace(/\/+$/u, '')}/invites/${encodeURIComponent(inviteUuid)}`;

/** Placeholders the invitation templates may use. */
export const INVITATION_PLACEHOLDERS = [
  'to',
  'teamName',
  'inviterName',
  'inviterEmail',
  'role',
  'expiresAt',
  'link',
  'unsubscribe',
] as const;

const DEFAULTS: Parts = {
  subject: '{{inviterName}} invited you to join {{teamName}} on Roster',
  text: `Hello,

{{inviterName}} ({{inviterEmail}}) invited you to join the team "{{teamName}}" on Roster as {{role}}.

Accept or decline the invitation here:
{{link}}

The invitation expires on {{expiresAt}}. If you did not expect it, you can ignore this e-mail.

No more invitations from {{teamName}}, or from anyone on Roster:
{{unsubscribe}}
`,
  html: `<!doctype html>
<html><head><meta charset="utf-8"><title>Invitation to {{teamName}}</title></head>
<body>
<p>Hello,</p>
<p><strong>{{inviterName}}</strong> ({{inviterEmail}}) invited you to join the team <strong>{{teamName}}</strong> on Roster as {{role}}.</p>
<p><a href="{{link}}">Accept or decline the invitation</a><br>{{link}}</p>
<p>The invitation expires on {{expiresAt}}. If you did not expect it, you can ignore this e-mail.</p>
<p><small><a href="{{unsubscribe}}">No more invitations from {{teamName}}, or from anyone on Roster</a></small></p>
</body></html>
`,
};

/** Only absolute http(s) links: a `javascript:` href must never reach the HTML part. */
export const checkLink = (link: string): string => {
  const url = URL.parse(link);
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw new Error('link must be an absolute http(s) URL');
  return url.href;
};

/** Subject, plain text and HTML of an invitation. Throws on a bad date, link or template. */
export const renderInvitation = (data: InvitationData, templateDir: string | undefined = config.mailTemplateDir): Rendered =>
  fill(loadTemplates('invitation', INVITATION_PLACEHOLDERS, DEFAULTS, templateDir), {
    to: data.to,
    teamName: data.teamName,
    inviterName: data.inviterName.trim() === '' ? data.inviterEmail : data.inviterName,
    inviterEmail: data.inviterEmail,
    role: roleName(data.role),
    expiresAt: humanUtc(data.expiresAt),
    link: checkLink(data.link),
    unsubscribe: checkLink(data.unsubscribe),
  });
