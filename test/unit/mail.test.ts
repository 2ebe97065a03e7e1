/**
 * lib/mail/: rendering, the header-injection rule, and the SMTP transport against a real SMTP server
 * (smtp-server) started in this process; the SES transport only as the SendEmail input it builds.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '#infra/dynamodb-local.ts';
import {
  renderEmailChange,
  renderEmailChangeNotice,
  renderRecovery,
  renderVerification,
  resetLink,
  verifyLink,
  withToken,
} from '#lib/mail/account-mail.ts';
import { renderDeclined } from '#lib/mail/declined.ts';
import { humanMinutes } from '#lib/mail/templates.ts';
import { inviteLink, renderInvitation, type InvitationData } from '#lib/mail/invitation.ts';
import { checkMessage, type MailMessage, MailRefusedError } from '#lib/mail/safety.ts';
import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { mockClient } from 'aws-sdk-client-mock';
import { createMailer, logMailer, type MailSettings, sesMailer, sesSendEmailInput, smtpMailer } from '#lib/mail/transports.ts';

const UUID = '6f1c2b7e-3d4a-4f5b-9c8d-0e1f2a3b4c5d';
const LINK = `https://roster.example.com/invites/${UUID}`;
const FROM = 'Roster <noreply@roster.example.com>';

const invitation = (over: Partial<InvitationData> = {}): InvitationData => ({
  to: 'bob@example.com',
  teamName: 'Acme',
  inviterName: 'Ann Lee',
  inviterEmail: 'ann@example.com',
  role: 'ADMIN',
  expiresAt: '2026-01-09T14:05:00.000Z',
  link: LINK,
  unsubscribe: 'https://roster.example.com/unsubscribe?token=stop',
  ...over,
});

const message = (over: Partial<MailMessage> = {}): MailMessage => ({
  ...renderInvitation(invitation(), undefined),
  to: 'bob@example.com',
  messageId: `invite.${UUID}.1`,
  ...over,
});

/** Names and addresses that try to add a header or a recipient. */
const HOSTILE = 'Eve\r\nBcc: evil@attacker.example\r\nX-Injected: 1';

describe('rendering', () => {
  it('builds the link from PUBLIC_URL', () => {
    expect(inviteLink(UUID, 'https://roster.example.com/')).toBe(LINK);
    expect(inviteLink('a/b?c', 'http://localhost:3000')).toBe('http://localhost:3000/invites/a%2Fb%3Fc');
    expect(inviteLink(UUID)).toMatch(new RegExp(`^https?://[^/]+(/.*)?/invites/${UUID}$`));
  });

  it('puts team, inviter, role, expiry and link in every part', () => {
    const r = renderInvitation(invitation(), undefined);
    expect(r.subject).toBe('Ann Lee invited you to join Acme on Roster');
    for (const part of [r.text, r.html]) {
      for (const s of ['Acme', 'Ann Lee', 'ann@example.com', 'Admin', 'Friday, 9 January 2026, 14:05 UTC', LINK]) expect(part).toContain(s);
    }
    expect(r.html).toContain(`<a href="${LINK}">`);
  });

  it('escapes every value in the HTML and keeps Unicode', () => {
    const r = renderInvitation(
      invitation({ teamName: '<script>alert("x")</script> & Co\'s', inviterName: 'Zoë 🚀 "Z" <b>', link: `${LINK}?a=1&b="2"` }),
      undefined,
    );
    expect(r.html).not.toContain('<script>');
    expect(r.html).not.toContain('<b>');
    expect(r.html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; Co&#39;s');
    expect(r.html).toContain('Zoë 🚀 &quot;Z&quot; &lt;b&gt;');
    expect(r.html).toContain('href="https://roster.example.com/invites/6f1c2b7e-3d4a-4f5b-9c8d-0e1f2a3b4c5d?a=1&amp;b=%222%22"');
    expect(r.text).toContain('<script>alert("x")</script> & Co\'s');
    expect(r.subject).toBe('Zoë 🚀 "Z" <b> invited you to join <script>alert("x")</script> & Co\'s on Roster');
  });

  it('turns line breaks and other control characters in names into spaces, and removes bidi controls', () => {
    const r = renderInvitation(invitation({ inviterName: HOSTILE, teamName: 'A\u2028B\u0085C\u202eD\u0000E\tF' }), undefined);
    expect(r.subject).toBe('Eve Bcc: evil@attacker.example X-Injected: 1 invited you to join A B CD E F on Roster');
    for (const part of [r.subject, r.text, r.html]) {
      expect(part).not.toMatch(/^(Bcc|X-Injected):/mu);
      for (const c of ['\u2028', '\u0085', '\u202e', '\u0000', '\t', '\r']) expect(part).not.toContain(c);
    }
  });

  it('does not expand placeholders inside values', () => {
    const r = renderInvitation(invitation({ teamName: '{{link}}' }), undefined);
    expect(r.subject).toBe('Ann Lee invited you to join {{link}} on Roster');
  });

  it('refuses links that are not http(s) and dates that are not dates', () => {
    expect(() => renderInvitation(invitation({ link: 'javascript:alert(1)' }), undefined)).toThrow(/link/u);
    expect(() => renderInvitation(invitation({ expiresAt: 'soon' }), undefined)).toThrow(/date/u);
  });

  it('falls back to the inviter e-mail when the name is empty', () => {
    expect(renderInvitation(invitation({ inviterName: ' ' }), undefined).subject).toBe(
      'ann@example.com invited you to join Acme on Roster',
    );
  });

  it('takes overrides from MAIL_TEMPLATE_DIR, escaping values in the HTML one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'roster-mail-'));
    writeFileSync(join(dir, 'invitation.subject.txt'), 'Join {{ teamName }} now\n');
    writeFileSync(join(dir, 'invitation.txt'), 'T:{{teamName}} L:{{link}} E:{{expiresAt}} R:{{role}} I:{{inviterName}}');
    writeFileSync(join(dir, 'invitation.html'), '<p>{{teamName}}</p><a href="{{link}}">go</a>');
    const r = renderInvitation(invitation({ teamName: 'A<&>"B' }), dir);
    expect(r).toEqual({
      subject: 'Join A<&>"B now',
      text: `T:A<&>"B L:${LINK} E:Friday, 9 January 2026, 14:05 UTC R:Admin I:Ann Lee`,
      html: `<p>A&lt;&amp;&gt;&quot;B</p><a href="${LINK}">go</a>`,
    });
  });

  it('keeps the built-in parts a template directory does not override', () => {
    const dir = mkdtempSync(join(tmpdir(), 'roster-mail-'));
    writeFileSync(join(dir, 'invitation.subject.txt'), 'Only the subject: {{teamName}}');
    const r = renderInvitation(invitation(), dir);
    expect(r.subject).toBe('Only the subject: Acme');
    expect(r.text).toBe(renderInvitation(invitation(), undefined).text);
  });

  it('refuses broken templates when they load', () => {
    const unknown = mkdtempSync(join(tmpdir(), 'roster-mail-'));
    writeFileSync(join(unknown, 'invitation.txt'), 'Hi {{password}}');
    expect(() => renderInvitation(invitation(), unknown)).toThrow(/unknown placeholder \{\{password\}\}/u);
    const twoLines = mkdtempSync(join(tmpdir(), 'roster-mail-'));
    writeFileSync(join(twoLines, 'invitation.subject.txt'), 'Hi\nBcc: evil@attacker.example');
    expect(() => renderInvitation(invitation(), twoLines)).toThrow(/one line/u);
    expect(() => renderInvitation(invitation(), join(unknown, 'missing'))).toThrow(/not a directory/u);
  });

  it('removes invisible and bidirectional control characters from every value', () => {
    // Shown as "Payroll exe.png" if the override stayed.
    const r = renderInvitation(
      invitation({
        teamName: 'Payroll \u202Egnp.exe',
        inviterName: 'A\u200bnn\u200d\u2060 \u2066L\u2069ee\ufeff\u200e\u200f\u202a\u202b\u202c\u202d\u2067\u2068',
      }),
      undefined,
    );
    expect(r.subject).toBe('Ann Lee invited you to join Payroll gnp.exe on Roster');
    for (const part of [r.subject, r.text, r.html]) {
      expect(part).toContain('Payroll gnp.exe');
      expect(part).not.toMatch(/[\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]/u);
    }
    const notice = renderEmailChangeNotice({ to: 'ann@example.com', name: 'Ann', newEmail: 'ann@\u202Emoc.example' }, undefined);
    expect(notice.text).toContain('ann@moc.example');
  });

  it('keeps what a name may hold (lib/core/text.ts): a joiner between two visible characters, a selector after one', () => {
    const r = renderInvitation(
      invitation({ teamName: '\u{1F469}\u200D\u{1F4BB} \u2764\uFE0F', inviterName: 'Ann\u200D Lee\u200C' }),
      undefined,
    );
    expect(r.subject).toBe('Ann Lee invited you to join \u{1F469}\u200D\u{1F4BB} \u2764\uFE0F on Roster');
  });

  it('renders the decline notice for the inviter with the same care', () => {
    const r = renderDeclined(
      {
        to: 'ann@example.com',
        inviterName: 'Ann',
        inviteeEmail: 'bob@example.com',
        teamName: '<i>Acme</i>\r\nBcc: x@y',
        role: 'MEMBER',
        declinedAt: '2026-01-03T08:00:00Z',
      },
      undefined,
    );
    expect(r.subject).toBe('bob@example.com declined your invitation to <i>Acme</i> Bcc: x@y');
    expect(r.text).toContain('Hello Ann,');
    expect(r.text).toContain('as Member (Saturday, 3 January 2026, 08:00 UTC)');
    expect(r.html).toContain('&lt;i&gt;Acme&lt;/i&gt; Bcc: x@y');
    expect(r.html).not.toContain('<i>');
  });
});

describe('account e-mail', () => {
  const TOKEN = 'tok_-A1';
  const HOSTILE_NAME = '<b>Eve</b> & "Co"\r\nBcc: evil@attacker.example';

  it('builds the links from PUBLIC_URL, the token as a query parameter', () => {
    expect(verifyLink(TOKEN, 'https://roster.example.com/')).toBe('https://roster.example.com/verify?token=tok_-A1');
    expect(resetLink(TOKEN, 'http://localhost:3000')).toBe('http://localhost:3000/reset?token=tok_-A1');
    expect(verifyLink('a&b=c d')).toMatch(/\/verify\?token=a%26b%3Dc%20d$/u);
    expect(withToken(inviteLink(UUID, 'https://roster.example.com'), TOKEN)).toBe(`${LINK}?token=tok_-A1`);
  });

  it('says how long a link works', () => {
    expect([1, 59, 60, 90, 120, 1440].map(humanMinutes)).toEqual(['1 minute', '59 minutes', '1 hour', '90 minutes', '2 hours', '24 hours']);
    expect(() => humanMinutes(0)).toThrow(/lifetime/u);
  });

  const VERIFY = verifyLink(TOKEN, 'https://roster.example.com');
  const RESET = resetLink(TOKEN, 'https://roster.example.com');

  it('verification: the address, the link, its lifetime, in every part', () => {
    const r = renderVerification({ to: 'carl@example.com', name: 'Carl Ito', link: VERIFY, minutes: 1440 }, undefined);
    expect(r.subject).toBe('Confirm your e-mail address for Roster');
    for (const part of [r.text, r.html])
      for (const s of ['Hello,', 'carl@example.com', VERIFY, 'works for 24 hours and only once']) expect(part).toContain(s);
    // Mailed to an address nobody has confirmed: no text of the account's choosing.
    for (const part of [r.subject, r.text, r.html]) expect(part).not.toContain('Carl');
    expect(r.html).toContain(`<a href="${VERIFY}">Confirm my address</a>`);
  });

  it('recovery: the account, the reset link, its lifetime', () => {
    const r = renderRecovery({ to: 'carl@example.com', name: 'Carl Ito', link: RESET, minutes: 60 }, undefined);
    expect(r.subject).toBe('Reset your Roster password');
    for (const part of [r.text, r.html]) {
      for (const s of [
        'Hello Carl Ito,',
        'the Roster account carl@example.com',
        RESET,
        'works for 1 hour and only once',
        'your password stays as it is',
      ])
        expect(part).toContain(s);
    }
    expect(r.html).toContain(`<a href="${RESET}">Choose a new password</a>`);
  });

  it('e-mail change: to the new address, naming the old one, with the confirmation link and its lifetime', () => {
    const r = renderEmailChange(
      { to: 'new@example.com', oldEmail: 'old@example.com', name: 'Carl Ito', link: VERIFY, minutes: 90 },
      undefined,
    );
    expect(r.subject).toBe('Confirm your new e-mail address for Roster');
    for (const part of [r.text, r.html]) {
      for (const s of [
        'from old@example.com to new@example.com',
        VERIFY,
        'works for 90 minutes and only once',
        'the account keeps old@example.com',
      ])
        expect(part).toContain(s);
      expect(part).not.toContain('Carl');
    }
    expect(r.html).toContain(`<a href="${VERIFY}">Confirm the change</a>`);
  });

  it('e-mail change notice: to the old address, naming the new one, what to do if it was not them, and no link', () => {
    const r = renderEmailChangeNotice({ to: 'old@example.com', name: 'Carl Ito', newEmail: 'new@example.com' }, undefined);
    expect(r.subject).toBe('A change of your Roster e-mail address was requested');
    for (const part of [r.text, r.html]) {
      for (const s of [
        'Roster account old@example.com',
        'new@example.com',
        'If this was not you',
        'reset it now',
        'asking for a password reset for old@example.com',
      ])
        expect(part).toContain(s);
      expect(part).not.toMatch(/https?:|href=/u);
    }
  });

  it('prints names safely: one line, HTML escaped, falling back to the address when empty', () => {
    const renders = [
      renderRecovery({ to: 'carl@example.com', name: HOSTILE_NAME, link: RESET, minutes: 60 }, undefined),
      renderEmailChangeNotice({ to: 'old@example.com', name: HOSTILE_NAME, newEmail: '<i>new</i>@example.com' }, undefined),
    ];
    for (const r of renders) {
      expect(r.text).toContain('Hello <b>Eve</b> & "Co" Bcc: evil@attacker.example,');
      expect(r.html).toContain('Hello &lt;b&gt;Eve&lt;/b&gt; &amp; &quot;Co&quot; Bcc: evil@attacker.example,');
      expect(r.html).not.toContain('<b>');
      expect(r.text).not.toMatch(/^Bcc:/mu);
    }
    expect(renders[1]?.html).toContain('&lt;i&gt;new&lt;/i&gt;@example.com');
    expect(renderRecovery({ to: 'carl@example.com', name: ' ', link: RESET, minutes: 60 }, undefined).text).toContain(
      'Hello carl@example.com,',
    );
    expect(renderEmailChangeNotice({ to: 'old@example.com', name: '', newEmail: 'new@example.com' }, undefined).text).toContain(
      'Hello old@example.com,',
    );
  });

  it('refuses links that are not http(s) and lifetimes that are not minutes', () => {
    expect(() => renderVerification({ to: 'c@example.com', name: 'C', link: 'javascript:alert(1)', minutes: 60 }, undefined)).toThrow(
      /link/u,
    );
    expect(() => renderRecovery({ to: 'c@example.com', name: 'C', link: RESET, minutes: Number.NaN }, undefined)).toThrow(/lifetime/u);
  });

  it('takes overrides from MAIL_TEMPLATE_DIR under the kinds verification, recovery, email_change and email_change_notice', () => {
    const dir = mkdtempSync(join(tmpdir(), 'roster-mail-'));
    writeFileSync(join(dir, 'verification.subject.txt'), 'Verify {{to}}\n');
    writeFileSync(join(dir, 'verification.html'), '<a href="{{link}}">{{name}}</a> {{lifetime}}');
    writeFileSync(join(dir, 'recovery.txt'), 'R {{link}} {{lifetime}}');
    writeFileSync(join(dir, 'email_change.txt'), 'C {{oldEmail}} {{to}} {{link}}');
    writeFileSync(join(dir, 'email_change_notice.subject.txt'), 'N {{newEmail}}');
    const v = renderVerification({ to: 'c@example.com', name: 'A<B', link: VERIFY, minutes: 60 }, dir);
    expect(v.subject).toBe('Verify c@example.com');
    expect(v.html).toBe(`<a href="${VERIFY}">A&lt;B</a> 1 hour`);
    expect(v.text).toBe(renderVerification({ to: 'c@example.com', name: 'A<B', link: VERIFY, minutes: 60 }, undefined).text);
    expect(renderRecovery({ to: 'c@example.com', name: 'C', link: RESET, minutes: 60 }, dir).text).toBe(`R ${RESET} 1 hour`);
    expect(renderEmailChange({ to: 'n@example.com', oldEmail: 'o@example.com', name: 'C', link: VERIFY, minutes: 60 }, dir).text).toBe(
      `C o@example.com n@example.com ${VERIFY}`,
    );
    expect(renderEmailChangeNotice({ to: 'o@example.com', name: 'C', newEmail: 'n@example.com' }, dir).subject).toBe('N n@example.com');
    // The notice has no link to offer a template.
    const noLink = mkdtempSync(join(tmpdir(), 'roster-mail-'));
    writeFileSync(join(noLink, 'email_change_notice.txt'), 'Click {{link}}');
    expect(() => renderEmailChangeNotice({ to: 'o@example.com', name: 'C', newEmail: 'n@example.com' }, noLink)).toThrow(
      /unknown placeholder \{\{link\}\}/u,
    );
  });
});

/** Every one of these must be refused before any transport library sees it. */
const REFUSED: [string, Partial<MailMessage>][] = [
  ['CRLF Bcc in the recipient', { to: 'bob@example.com\r\nBcc: evil@attacker.example' }],
  ['LF in the recipient', { to: 'bob@example.com\nX-Injected: 1' }],
  ['a recipient list', { to: 'bob@example.com, evil@attacker.example' }],
  ['a display name', { to: 'Bob <evil@attacker.example>' }],
  ['NEL in the recipient', { to: 'bob@example.com\u0085' }],
  ['an empty recipient', { to: '' }],
  ['CRLF in the subject', { subject: 'Hi\r\nBcc: evil@attacker.example' }],
  ['CR in the subject', { subject: 'Hi\rBcc: evil@attacker.example' }],
  ['LS in the subject', { subject: 'Hi\u2028Bcc: evil@attacker.example' }],
  ['NUL in the subject', { subject: 'Hi\u0000' }],
  ['an empty subject', { subject: ' ' }],
  ['a Message-ID that closes the bracket', { messageId: 'x>\r\nBcc: evil@attacker.example' }],
  ['a Message-ID with a space', { messageId: 'a b' }],
];

describe('header injection through the transports', () => {
  it.each(REFUSED)('refuses %s', async (_, over) => {
    const m = message(over);
    expect(() => checkMessage(m)).toThrow(MailRefusedError);
    expect(() => sesSendEmailInput(m, FROM)).toThrow(MailRefusedError);
    await expect(logMailer({ from: FROM }).send(m)).rejects.toThrow(MailRefusedError);
  });

  it('refuses a MAIL_FROM that is not one address on one line', () => {
    expect(() => logMailer({ from: 'Roster <a@b.example>\r\nBcc: evil@attacker.example' })).toThrow(/MAIL_FROM/u);
    expect(() => logMailer({ from: 'a@b.example, c@d.example' })).toThrow(/MAIL_FROM/u);
  });
});

describe('choosing the transport', () => {
  const base: MailSettings = {
    transport: undefined,
    from: FROM,
    smtpUrl: undefined,
    smtpTimeoutMs: 1000,
    smtpSendTimeoutMs: 2000,
    region: 'us-east-1',
  };
  it('logs by default, uses SMTP when SMTP_URL is set, SES when asked, and refuses nonsense', () => {
    expect(createMailer(base).kind).toBe('log');
    expect(createMailer({ ...base, smtpUrl: 'smtp://127.0.0.1:2525' }).kind).toBe('smtp');
    expect(createMailer({ ...base, transport: 'ses' }).kind).toBe('ses');
    expect(createMailer({ ...base, transport: 'ses', smtpUrl: 'smtp://127.0.0.1:2525' }).kind).toBe('ses');
    expect(() => createMailer({ ...base, transport: 'smtp' })).toThrow(/SMTP_URL/u);
    expect(() => createMailer({ ...base, transport: 'pigeon' })).toThrow(/MAIL_TRANSPORT/u);
  });

  it('the log transport writes recipient, subject, links and the List-Unsubscribe link', async () => {
    // Log lines are JSON written to stdout as they are (lib/core/log.ts).
    const info = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      await logMailer({ from: FROM }).send({ ...message(), unsubscribe: 'https://roster.example.com/unsubscribe?token=stop' });
      const line = JSON.parse(String(info.mock.calls.at(-1)?.[0])) as Record<string, unknown>;
      expect(line).toMatchObject({
        to: 'bob@example.com',
        subject: 'Ann Lee invited you to join Acme on Roster',
        messageId: `<invite.${UUID}.1@roster.example.com>`,
        links: [LINK, 'https://roster.example.com/unsubscribe?token=…'],
        listUnsubscribe: 'https://roster.example.com/unsubscribe?token=…',
      });
    } finally {
      info.mockRestore();
    }
  });

  it("the log transport hides the links' tokens unless told to show them (only locally)", async () => {
    const info = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const withToken = { ...message(), text: `Open https://roster.example.com/reset?token=Vt7bS0aN2mW1pQ4x&x=1 now` };
    const linksOf = async (revealTokens: boolean) => {
      await logMailer({ from: FROM, revealTokens }).send(withToken);
      return (JSON.parse(String(info.mock.calls.at(-1)?.[0])) as { links: string[] }).links;
    };
    try {
      expect(await linksOf(false)).toEqual(['https://roster.example.com/reset?token=…&x=1']);
      expect(await linksOf(true)).toEqual(['https://roster.example.com/reset?token=Vt7bS0aN2mW1pQ4x&x=1']);
    } finally {
      info.mockRestore();
    }
  });
});

describe('SES transport', () => {
  it('builds the SendEmail input: one recipient, both parts in UTF-8, the stable id in a header', () => {
    const m = message({ subject: 'Zoë invited you to join Acme on Roster' });
    expect(sesSendEmailInput(m, FROM)).toEqual({
      FromEmailAddress: '"Roster" <noreply@roster.example.com>',
      Destination: { ToAddresses: ['bob@example.com'] },
      Content: {
        Simple: {
          Subject: { Data: 'Zoë invited you to join Acme on Roster', Charset: 'UTF-8' },
          Body: { Text: { Data: m.text, Charset: 'UTF-8' }, Html: { Data: m.html, Charset: 'UTF-8' } },
          Headers: [{ Name: 'X-Roster-Message-Id', Value: `<invite.${UUID}.1@roster.example.com>` }],
        },
      },
    });
  });

  it("adds RFC 8058's List-Unsubscribe and List-Unsubscribe-Post headers for a message's one-click link", () => {
    const stop = 'https://roster.example.com/unsubscribe?token=stop';
    expect(sesSendEmailInput({ ...message(), unsubscribe: stop }, FROM).Content?.Simple?.Headers).toEqual([
      { Name: 'X-Roster-Message-Id', Value: `<invite.${UUID}.1@roster.example.com>` },
      { Name: 'List-Unsubscribe', Value: `<${stop}>` },
      { Name: 'List-Unsubscribe-Post', Value: 'List-Unsubscribe=One-Click' },
    ]);
    // A link that could carry a header of its own, or is not a web link, is refused before sending.
    for (const bad of [
      'https://roster.example.com/unsubscribe?token=a\r\nBcc: x@evil.example',
      'mailto:stop@roster.example.com',
      'javascript:alert(1)',
    ])
      expect(() => sesSendEmailInput({ ...message(), unsubscribe: bad }, FROM)).toThrow(MailRefusedError);
  });

  it('sends through the configuration set when one is set (bounces and complaints come back only then), and names none otherwise', async () => {
    const ses = mockClient(SESv2Client);
    ses.on(SendEmailCommand).resolves({ MessageId: 'ses-1' });
    const client = new SESv2Client({ region: 'eu-west-1' });
    await sesMailer({ from: FROM, region: 'eu-west-1', configurationSet: 'RosterMail' }, client).send(message());
    await sesMailer({ from: FROM, region: 'eu-west-1' }, client).send(message());
    const inputs = ses.commandCalls(SendEmailCommand).map((call) => call.args[0].input);
    expect(inputs.map((input) => input.ConfigurationSetName)).toEqual(['RosterMail', undefined]);
    expect(inputs[0]).toEqual({ ...sesSendEmailInput(message(), FROM), ConfigurationSetName: 'RosterMail' });
    ses.restore();
  });

  it('encodes a display name SES cannot take as it is', () => {
    expect(sesSendEmailInput(message(), 'noreply@roster.example.com').FromEmailAddress).toBe('noreply@roster.example.com');
    expect(sesSendEmailInput(message(), '"Ro\\"ster" <noreply@roster.example.com>').FromEmailAddress).toBe(
      '"Ro\\"ster" <noreply@roster.example.com>',
    );
    expect(sesSendEmailInput(message(), 'Zoë Team <noreply@roster.example.com>').FromEmailAddress).toBe(
      `=?UTF-8?B?${Buffer.from('Zoë Team').toString('base64')}?= <noreply@roster.example.com>`,
    );
  });
});

interface Received {
  mailFrom: string;
  rcptTo: string[];
  raw: string;
}

describe('SMTP transport against a real SMTP server', () => {
  const received: Received[] = [];
  let server: SMTPServer;
  let url: string;

  beforeAll(async () => {
    server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          const env = session.envelope;
          received.push({
            mailFrom: env.mailFrom ? env.mailFrom.address : '',
            rcptTo: env.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8'),
          });
          callback();
        });
      },
    });
    const port = await freePort();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    url = `smtp://127.0.0.1:${port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const mailer = () => smtpMailer({ from: FROM, smtpUrl: url, smtpTimeoutMs: 2000, smtpSendTimeoutMs: 5000 });

  it('delivers recipient, subject, both parts, the link and the Message-ID; injected names add no header', async () => {
    const rendered = renderInvitation(
      invitation({ inviterName: HOSTILE, teamName: 'Zoë & <Co>\r\nCc: evil2@attacker.example' }),
      undefined,
    );
    const id = `invite.${UUID}.2`;
    await mailer().send({ ...rendered, to: 'bob@example.com', messageId: id });

    const got = received.at(-1);
    expect(got?.mailFrom).toBe('noreply@roster.example.com');
    expect(got?.rcptTo).toEqual(['bob@example.com']);
    const raw = got?.raw ?? '';
    const headerBlock = raw.slice(0, raw.indexOf('\r\n\r\n'));
    expect(headerBlock).not.toMatch(/^(bcc|cc|x-injected):/imu);

    const parsed = await simpleParser(raw);
    expect(parsed.messageId).toBe(`<${id}@roster.example.com>`);
    expect(parsed.subject).toBe(rendered.subject);
    expect(parsed.subject).toContain('Zoë & <Co> Cc: evil2@attacker.example');
    const to = Array.isArray(parsed.to) ? parsed.to : [parsed.to];
    expect(to.flatMap((a) => a?.value ?? []).map((a) => a.address)).toEqual(['bob@example.com']);
    expect(parsed.cc).toBeUndefined();
    expect(parsed.bcc).toBeUndefined();
    expect(parsed.headers.has('x-injected')).toBe(false);
    expect(parsed.text).toContain(LINK);
    expect(parsed.text).toContain('Friday, 9 January 2026, 14:05 UTC');
    expect(parsed.html).toContain(`href="${LINK}"`);
    expect(parsed.html).toContain('Zoë &amp; &lt;Co&gt;');
  });

  it("sends a one-click link as RFC 8058's List-Unsubscribe and List-Unsubscribe-Post headers", async () => {
    const stop = 'https://roster.example.com/unsubscribe?token=stop';
    await mailer().send({ ...message({ messageId: `invite.${UUID}.4` }), unsubscribe: stop });
    const parsed = await simpleParser(received.at(-1)?.raw ?? '');
    // The raw lines: mailparser folds List-* headers into a structured `list` of its own.
    const line = (key: string) => parsed.headerLines.find((h) => h.key === key)?.line;
    expect(line('list-unsubscribe')).toBe(`List-Unsubscribe: <${stop}>`);
    expect(line('list-unsubscribe-post')).toBe('List-Unsubscribe-Post: List-Unsubscribe=One-Click');
  });

  it.each(REFUSED)('refuses %s before the server sees anything', async (_, over) => {
    const before = received.length;
    await expect(mailer().send(message(over))).rejects.toThrow(MailRefusedError);
    expect(received.length).toBe(before);
  });

  it('sends the same Message-ID for the same message, so a duplicate can be recognised', async () => {
    const m = message({ messageId: `invite.${UUID}.3` });
    await mailer().send(m);
    await mailer().send(m);
    const ids = await Promise.all(received.slice(-2).map(async (r) => (await simpleParser(r.raw)).messageId));
    expect(ids).toEqual([`<invite.${UUID}.3@roster.example.com>`, `<invite.${UUID}.3@roster.example.com>`]);
  });
});

describe('SMTP transport when the server is down or hung', () => {
  const sockets: Socket[] = [];
  let silent: Server;
  let silentPort: number;

  beforeAll(async () => {
    // Accepts connections and never says a word: the SMTP greeting never comes.
    silent = createServer((socket) => sockets.push(socket));
    silentPort = await freePort();
    await new Promise<void>((resolve) => silent.listen(silentPort, '127.0.0.1', resolve));
  });
  afterAll(() => {
    for (const s of sockets) s.destroy();
    return new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  const timed = async (send: Promise<void>): Promise<number> => {
    const start = performance.now();
    await expect(send).rejects.toThrow();
    return performance.now() - start;
  };

  it('rejects at once when nothing listens', async () => {
    const port = await freePort();
    const mailer = smtpMailer({ from: FROM, smtpUrl: `smtp://127.0.0.1:${port}`, smtpTimeoutMs: 500, smtpSendTimeoutMs: 1000 });
    expect(await timed(mailer.send(message()))).toBeLessThan(1000);
  });

  it('rejects within the phase timeout when the server never greets', async () => {
    const mailer = smtpMailer({ from: FROM, smtpUrl: `smtp://127.0.0.1:${silentPort}`, smtpTimeoutMs: 300, smtpSendTimeoutMs: 10_000 });
    const ms = await timed(mailer.send(message()));
    expect(ms).toBeGreaterThanOrEqual(250);
    expect(ms).toBeLessThan(2000);
  });

  it('rejects within the send deadline whatever the phase timeouts, and closes the connection: the send does not go on', async () => {
    const mailer = smtpMailer({ from: FROM, smtpUrl: `smtp://127.0.0.1:${silentPort}`, smtpTimeoutMs: 10_000, smtpSendTimeoutMs: 300 });
    const before = sockets.length;
    await expect(mailer.send(message())).rejects.toThrow(/longer than 300 ms/u);
    const socket = sockets[before];
    expect(socket).toBeDefined();
    // The client hung up: the server's side of the connection ends within moments of the deadline.
    if (!socket?.readableEnded && !socket?.destroyed)
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the connection is still open 2 s after the deadline')), 2000);
        socket?.once('close', () => {
          clearTimeout(timer);
          resolve();
        });
        socket?.once('end', () => {
          clearTimeout(timer);
          resolve();
        });
      });
  });
});
