import { config } from '#lib/core/config.ts';
import { fill, humanUtc, loadTemplates, type Parts, type Rendered, roleName } from './templates.ts';

/** The short notice an inviter gets when an invite is declined. */
export interface DeclinedData {
  /** The inviter's e-mail address (the recipient). */
  to: string;
  inviterName: string;
  inviteeEmail: string;
  teamName: string;
  role: string;
  /** ISO date-time of the decline. */
  declinedAt: string;
}

export const DECLINED_PLACEHOLDERS = ['to', 'inviterName', 'inviteeEmail', 'teamName', 'role', 'declinedAt'] as const;

const DEFAULTS: Parts = {
  subject: '{{inviteeEmail}} declined your invitation to {{teamName}}',
  text: `Hello {{inviterName}},

{{inviteeEmail}} declined your invitation to join the team "{{teamName}}" on Roster as {{role}} ({{declinedAt}}).
`,
  html: `<!doctype html>
<html><head><meta charset="utf-8"><title>Invitation declined</title></head>
<body>
<p>Hello {{inviterName}},</p>
<p>{{inviteeEmail}} declined your invitation to join the team <strong>{{teamName}}</strong> on Roster as {{role}} ({{declinedAt}}).</p>
</body></html>
`,
};

/** Subject, plain text and HTML of a decline notice. Throws on a bad date or template. */
export const renderDeclined = (data: DeclinedData, templateDir: string | undefined = config.mailTemplateDir): Rendered =>
  fill(loadTemplates('declined', DECLINED_PLACEHOLDERS, DEFAULTS, templateDir), {
    to: data.to,
    inviterName: data.inviterName.trim() === '' ? data.to : data.inviterName,
    inviteeEmail: data.inviteeEmail,
    teamName: data.teamName,
    role: roleName(data.role),
    declinedAt: humanUtc(data.declinedAt),
  });
