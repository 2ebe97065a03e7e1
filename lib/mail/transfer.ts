import { config } from '#lib/core/config.ts';
import { checkLink } from './invitation.ts';
import { fill, humanUtc, loadTemplates, type Parts, type Rendered } from './templates.ts';

/** The data of the e-mail that tells a member they were nominated as a team's owner. */
export interface TransferData {
  /** The nominee's e-mail address (the recipient). */
  to: string;
  /** The nominee's display name; empty falls back to their address. */
  name: string;
  teamName: string;
  /** The nominating owner's display name; empty falls back to their address. */
  nominatorName: string;
  nominatorEmail: string;
  /** ISO date-time; shown as e.g. `Friday, 9 January 2026, 14:05 UTC`. */
  expiresAt: string;
  /** From transferEndpoint(slug, 'accept'). */
  acceptUrl: string;
  /** From transferEndpoint(slug, 'decline'). */
  declineUrl: string;
  /** From unsubscribeUrl() (./blocks.ts): stops this team's nominations and invitations to the address. */
  unsubscribe: string;
}

/**
 * Where the nominee answers: the API's own endpoints (`POST`, with the nominee's access token).
 * Roster has no page for a transfer, so the e-mail names them as text, never as a link to open: a
 * browser's GET of either is a 405.
 */
export const transferEndpoint = (slug: string, answer: 'accept' | 'decline', publicUrl: string = config.publicUrl): string =>
  `${publicUrl.replace(/\/+$/u, '')}/api/teams/${encodeURIComponent(slug)}/transfer/${answer}`;

/** Placeholders the transfer templates may use. */
export const TRANSFER_PLACEHOLDERS = [
  'to',
  'name',
  'teamName',
  'nominatorName',
  'nominatorEmail',
  'expiresAt',
  'acceptUrl',
  'declineUrl',
  'unsubscribe',
] as const;

const DEFAULTS: Parts = {
  subject: '{{nominatorName}} proposes to make you an owner of {{teamName}} on Roster',
  text: `Hello {{name}},

{{nominatorName}} ({{nominatorEmail}}) proposes to hand you their ownership of the team "{{teamName}}" on Roster. If you accept, you become an Owner of the team and {{nominatorName}} becomes an Admin.

Accept or decline it, signed in as {{to}}, in the application your team uses with Roster. It sends one of these requests:
  accept:  POST {{acceptUrl}}
  decline: POST {{declineUrl}}

The proposal expires on {{expiresAt}}. If you do nothing, nothing changes.

No more proposals or invitations from {{teamName}}, or from anyone on Roster:
{{unsubscribe}}
`,
  html: `<!doctype html>
<html><head><meta charset="utf-8"><title>Ownership of {{teamName}}</title></head>
<body>
<p>Hello {{name}},</p>
<p><strong>{{nominatorName}}</strong> ({{nominatorEmail}}) proposes to hand you their ownership of the team <strong>{{teamName}}</strong> on Roster. If you accept, you become an Owner of the team and {{nominatorName}} becomes an Admin.</p>
<p>Accept or decline it, signed in as {{to}}, in the application your team uses with Roster. It sends one of these requests:</p>
<ul><li>accept: <code>POST {{acceptUrl}}</code></li><li>decline: <code>POST {{declineUrl}}</code></li></ul>
<p>The proposal expires on {{expiresAt}}. If you do nothing, nothing changes.</p>
<p><small><a href="{{unsubscribe}}">No more proposals or invitations from {{teamName}}, or from anyone on Roster</a></small></p>
</body></html>
`,
};

/** Subject, plain text and HTML of a transfer nomination. Throws on a bad date, endpoint or template. */
export const renderTransfer = (data: TransferData, templateDir: string | undefined = config.mailTemplateDir): Rendered =>
  fill(loadTemplates('transfer', TRANSFER_PLACEHOLDERS, DEFAULTS, templateDir), {
    to: data.to,
    name: data.name.trim() === '' ? data.to : data.name,
    teamName: data.teamName,
    nominatorName: data.nominatorName.trim() === '' ? data.nominatorEmail : data.nominatorName,
    nominatorEmail: data.nominatorEmail,
    expiresAt: humanUtc(data.expiresAt),
    acceptUrl: checkLink(data.acceptUrl),
    declineUrl: checkLink(data.declineUrl),
    unsubscribe: checkLink(data.unsubscribe),
  });
