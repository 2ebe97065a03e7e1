import { config } from '#lib/core/config.ts';
import { checkLink } from './invitation.ts';
import { fill, humanMinutes, loadTemplates, type Parts, type Rendered } from './templates.ts';

/**
 * The account e-mails (docs/mail.md, "Account e-mail"): confirm an address, reset a password,
 * confirm a new address, and the notice to the old address that a change was asked for. The first
 * three carry a link with a token the mailer makes at send time (lib/mail/outbox.ts).
 */

/** `link` with the mailed token as its `token` query parameter. */
export const withToken = (link: string, token: string): string => `${link}?token=${encodeURIComponent(token)}`;

const page = (path: string, publicUrl: string): string => `${publicUrl.replace(/\/+$/u, '')}${path}`;

/** The confirmation page of a verification or e-mail change token: `{PUBLIC_URL}/verify?token=…`. */
export const verifyLink = (token: string, publicUrl: string = config.publicUrl): string => withToken(page('/verify', publicUrl), token);

/** The new-password page of a recovery token: `{PUBLIC_URL}/reset?token=…`. */
export const resetLink = (token: string, publicUrl: string = config.publicUrl): string => withToken(page('/reset', publicUrl), token);

/** What a link-carrying account e-mail needs. */
export interface AccountLinkData {
  /** The recipient: the address to confirm or to reset. */
  to: string;
  /** The account holder's name; empty falls back to the address. */
  name: string;
  /** From verifyLink() or resetLink(). */
  link: string;
  /** How long the link works, in minutes. */
  minutes: number;
}

export interface EmailChangeData extends AccountLinkData {
  /** The address in use until the new one (`to`) is confirmed. */
  oldEmail: string;
}

export interface EmailChangeNoticeData {
  /** The address in use (the recipient). */
  to: string;
  name: string;
  /** The address the change was asked for. */
  newEmail: string;
}

export const VERIFICATION_PLACEHOLDERS = ['to', 'name', 'link', 'lifetime'] as const;
export const RECOVERY_PLACEHOLDERS = ['to', 'name', 'link', 'lifetime'] as const;
export const EMAIL_CHANGE_PLACEHOLDERS = ['to', 'name', 'oldEmail', 'link', 'lifetime'] as const;
export const EMAIL_CHANGE_NOTICE_PLACEHOLDERS = ['to', 'name', 'newEmail'] as const;
export const ADDRESS_IN_USE_PLACEHOLDERS = ['to', 'name'] as const;
export const RECOVERY_CODE_USED_PLACEHOLDERS = ['to', 'name', 'left'] as const;
export const FACTOR_ADDED_PLACEHOLDERS = ['to', 'name', 'factors'] as const;
export const IDENTITIES_CHANGED_PLACEHOLDERS = ['to', 'name', 'ways'] as const;
export const IDENTITY_REFUSED_PLACEHOLDERS = ['to', 'name'] as const;

const html = (title: string, body: string): string => `<!doctype html>
<html><head><meta charset="utf-8"><title>${title}</title></head>
<body>
${body}
</body></html>
`;

// The two kinds mailed to an address nobody has confirmed yet greet no one by name: the name is
// the account's choice, and the account may not be the address's owner's (a squatter's sign-up,
// an e-mail change to a stranger), so it must not carry text of its choosing to that address.
const VERIFICATION: Parts = {
  subject: 'Confirm your e-mail address for Roster',
  text: `Hello,

Please confirm that {{to}} is your e-mail address for Roster:
{{link}}

The link works for {{lifetime}} and only once. If you did not sign up for Roster, you can ignore this e-mail.
`,
  html: html(
    'Confirm your e-mail address',
    `<p>Hello,</p>
<p>Please confirm that {{to}} is your e-mail address for Roster.</p>
<p><a href="{{link}}">Confirm my address</a><br>{{link}}</p>
<p>The link works for {{lifetime}} and only once. If you did not sign up for Roster, you can ignore this e-mail.</p>`,
  ),
};

const RECOVERY: Parts = {
  subject: 'Reset your Roster password',
  text: `Hello {{name}},

Someone asked to reset the password of the Roster account {{to}}. Choose a new password here:
{{link}}

The link works for {{lifetime}} and only once. If you did not ask for it, you can ignore this e-mail: your password stays as it is.
`,
  html: html(
    'Reset your password',
    `<p>Hello {{name}},</p>
<p>Someone asked to reset the password of the Roster account {{to}}.</p>
<p><a href="{{link}}">Choose a new password</a><br>{{link}}</p>
<p>The link works for {{lifetime}} and only once. If you did not ask for it, you can ignore this e-mail: your password stays as it is.</p>`,
  ),
};

const EMAIL_CHANGE: Parts = {
  subject: 'Confirm your new e-mail address for Roster',
  text: `Hello,

You asked to change the e-mail address of your Roster account from {{oldEmail}} to {{to}}. Confirm the change here:
{{link}}

The link works for {{lifetime}} and only once. Until then the account keeps {{oldEmail}}. If you did not ask for this, you can ignore this e-mail.
`,
  html: html(
    'Confirm your new e-mail address',
    `<p>Hello,</p>
<p>You asked to change the e-mail address of your Roster account from {{oldEmail}} to {{to}}.</p>
<p><a href="{{link}}">Confirm the change</a><br>{{link}}</p>
<p>The link works for {{lifetime}} and only once. Until then the account keeps {{oldEmail}}. If you did not ask for this, you can ignore this e-mail.</p>`,
  ),
};

// No link: a notice someone may have caused with a stolen password must not offer a one-click action.
const EMAIL_CHANGE_NOTICE: Parts = {
  subject: 'A change of your Roster e-mail address was requested',
  text: `Hello {{name}},

Someone signed in to your Roster account {{to}} and asked to change its e-mail address to {{newEmail}}. The change happens only once that address is confirmed.

If this was not you, your password is known to someone else: reset it now by asking for a password reset for {{to}}. A reset ends every session, and the link that would confirm the change stops working.
`,
  html: html(
    'E-mail change requested',
    `<p>Hello {{name}},</p>
<p>Someone signed in to your Roster account {{to}} and asked to change its e-mail address to <strong>{{newEmail}}</strong>. The change happens only once that address is confirmed.</p>
<p>If this was not you, your password is known to someone else: reset it now by asking for a password reset for {{to}}. A reset ends every session, and the link that would confirm the change stops working.</p>`,
  ),
};

// No link at all: the asker may be anyone, and the owner needs nothing new to sign in.
const ADDRESS_IN_USE: Parts = {
  subject: 'Someone tried to use your e-mail address on Roster',
  text: `Hello {{name}},

Someone asked to sign up for Roster, or to move another Roster account to this address, with {{to}}. Your account already has this address, so nothing changed and no account was made.

If it was you, sign in with your password, or ask for a password reset for {{to}} where you sign in. If it was not you, you can ignore this e-mail.
`,
  html: html(
    'Your address is already in use',
    `<p>Hello {{name}},</p>
<p>Someone asked to sign up for Roster, or to move another Roster account to this address, with {{to}}. Your account already has this address, so nothing changed and no account was made.</p>
<p>If it was you, sign in with your password, or ask for a password reset for {{to}} where you sign in. If it was not you, you can ignore this e-mail.</p>`,
  ),
};

// No link, as for a recovery code: a second factor added by whoever has the password must not go unseen
// (a passkey can then sign in alone), and the owner acts from the account security page or support.
const FACTOR_ADDED: Parts = {
  subject: 'A second factor was added to your Roster account',
  text: `Hello {{name}},

A second factor was added to your Roster account {{to}}. Its factors are now: {{factors}}.

If this was not you, someone knows your password: reset your password now by asking for a password reset for {{to}} (a reset ends every session), then remove the factor you do not know from the account security page, and contact whoever runs this service if you cannot.
`,
  html: html(
    'A second factor was added',
    `<p>Hello {{name}},</p>
<p>A second factor was added to your Roster account {{to}}. Its factors are now: {{factors}}.</p>
<p>If this was not you, someone knows your password: reset your password now by asking for a password reset for {{to}} (a reset ends every session), then remove the factor you do not know from the account security page, and contact whoever runs this service if you cannot.</p>`,
  ),
};

// No link, as for a factor: a provider linked by whoever holds a session is a new way in that must not go unseen.
const IDENTITIES_CHANGED: Parts = {
  subject: 'The ways to sign in to your Roster account changed',
  text: `Hello {{name}},

A sign-in provider was linked to or unlinked from your Roster account {{to}}. You can now sign in with: {{ways}}.

If this was not you, someone has signed in to your account: reset your password now by asking for a password reset for {{to}} (a reset ends every session), unlink what you do not know, and contact whoever runs this service if you cannot.
`,
  html: html(
    'The ways to sign in changed',
    `<p>Hello {{name}},</p>
<p>A sign-in provider was linked to or unlinked from your Roster account {{to}}. You can now sign in with: {{ways}}.</p>
<p>If this was not you, someone has signed in to your account: reset your password now by asking for a password reset for {{to}} (a reset ends every session), unlink what you do not know, and contact whoever runs this service if you cannot.</p>`,
  ),
};

// No link: the one who tried may be the owner or someone claiming the address; the owner needs only to know what to do.
const IDENTITY_REFUSED: Parts = {
  subject: 'A sign-in to your Roster account was refused',
  text: `Hello {{name}},

Someone tried to sign in to the Roster account {{to}} through a sign-in provider (such as Google or GitHub). Roster refused: it cannot tell that the account's password was chosen by whoever reads this mailbox (the account was never confirmed, its password was not set through a link Roster mailed here, or it has a second factor).

If it was you: ask for a password reset for {{to}} and reset the password (this proves the address is yours and ends every other session), then sign in with the provider again; or sign in and link the provider from your account. If it was not you, nothing has changed.
`,
  html: html(
    'A sign-in was refused',
    `<p>Hello {{name}},</p>
<p>Someone tried to sign in to the Roster account {{to}} through a sign-in provider (such as Google or GitHub). Roster refused: it cannot tell that the account's password was chosen by whoever reads this mailbox (the account was never confirmed, its password was not set through a link Roster mailed here, or it has a second factor).</p>
<p>If it was you: ask for a password reset for {{to}} and reset the password (this proves the address is yours and ends every other session), then sign in with the provider again; or sign in and link the provider from your account. If it was not you, nothing has changed.</p>`,
  ),
};

// No link: whoever used the code may be reading along, and the owner needs nothing new to act.
const RECOVERY_CODE_USED: Parts = {
  subject: 'A recovery code was used on your Roster account',
  text: `Hello {{name}},

A recovery code was used in place of your second factor to sign in to your Roster account {{to}}. It no longer works; {{left}} of your recovery codes are left.

If this was not you, someone knows your password and has one of your recovery codes: reset your password now by asking for a password reset for {{to}} (a reset ends every session), then sign in, make new recovery codes and check your second factors.
`,
  html: html(
    'A recovery code was used',
    `<p>Hello {{name}},</p>
<p>A recovery code was used in place of your second factor to sign in to your Roster account {{to}}. It no longer works; {{left}} of your recovery codes are left.</p>
<p>If this was not you, someone knows your password and has one of your recovery codes: reset your password now by asking for a password reset for {{to}} (a reset ends every session), then sign in, make new recovery codes and check your second factors.</p>`,
  ),
};

const nameOr = (name: string, address: string): string => (name.trim() === '' ? address : name);

/** Subject, plain text and HTML of the link that confirms an address. Throws on a bad link, lifetime or template. */
export const renderVerification = (data: AccountLinkData, templateDir: string | undefined = config.mailTemplateDir): Rendered =>
  fill(loadTemplates('verification', VERIFICATION_PLACEHOLDERS, VERIFICATION, templateDir), {
    to: data.to,
    name: nameOr(data.name, data.to),
    link: checkLink(data.link),
    lifetime: humanMinutes(data.minutes),
  });

/** The password reset link. */
export const renderRecovery = (data: AccountLinkData, templateDir: string | undefined = config.mailTemplateDir): Rendered =>
  fill(loadTemplates('recovery', RECOVERY_PLACEHOLDERS, RECOVERY, templateDir), {
    to: data.to,
    name: nameOr(data.name, data.to),
    link: checkLink(data.link),
    lifetime: humanMinutes(data.minutes),
  });

/** The link that confirms a new address, sent to that address. */
export const renderEmailChange = (data: EmailChangeData, templateDir: string | undefined = config.mailTemplateDir): Rendered =>
  fill(loadTemplates('email_change', EMAIL_CHANGE_PLACEHOLDERS, EMAIL_CHANGE, templateDir), {
    to: data.to,
    name: nameOr(data.name, data.oldEmail),
    oldEmail: data.oldEmail,
    link: checkLink(data.link),
    lifetime: humanMinutes(data.minutes),
  });

/** The notice to the address in use that a change to `newEmail` was asked for. */
export const renderEmailChangeNotice = (data: EmailChangeNoticeData, templateDir: string | undefined = config.mailTemplateDir): Rendered =>
  fill(loadTemplates('email_change_notice', EMAIL_CHANGE_NOTICE_PLACEHOLDERS, EMAIL_CHANGE_NOTICE, templateDir), {
    to: data.to,
    name: nameOr(data.name, data.to),
    newEmail: data.newEmail,
  });

/** The notice to an account's address that a sign-up or an e-mail change asked for it (CONCEAL_ACCOUNTS). */
export const renderAddressInUse = (
  data: { to: string; name: string },
  templateDir: string | undefined = config.mailTemplateDir,
): Rendered =>
  fill(loadTemplates('address_in_use', ADDRESS_IN_USE_PLACEHOLDERS, ADDRESS_IN_USE, templateDir), {
    to: data.to,
    name: nameOr(data.name, data.to),
  });

/** The notice to an account's address that one of its recovery codes was used; `left` is how many remain. */
export const renderRecoveryCodeUsed = (
  data: { to: string; name: string; left: number },
  templateDir: string | undefined = config.mailTemplateDir,
): Rendered =>
  fill(loadTemplates('recovery_code_used', RECOVERY_CODE_USED_PLACEHOLDERS, RECOVERY_CODE_USED, templateDir), {
    to: data.to,
    name: nameOr(data.name, data.to),
    left: String(data.left),
  });

/** The notice to an account's address that a second factor was added; `factors` names them all. */
export const renderFactorAdded = (
  data: { to: string; name: string; factors: string },
  templateDir: string | undefined = config.mailTemplateDir,
): Rendered =>
  fill(loadTemplates('factor_added', FACTOR_ADDED_PLACEHOLDERS, FACTOR_ADDED, templateDir), {
    to: data.to,
    name: nameOr(data.name, data.to),
    factors: data.factors,
  });

/** The notice to an account's address that a provider was linked or unlinked; `ways` names every way in now. */
export const renderIdentitiesChanged = (
  data: { to: string; name: string; ways: string },
  templateDir: string | undefined = config.mailTemplateDir,
): Rendered =>
  fill(loadTemplates('identities_changed', IDENTITIES_CHANGED_PLACEHOLDERS, IDENTITIES_CHANGED, templateDir), {
    to: data.to,
    name: nameOr(data.name, data.to),
    ways: data.ways,
  });

/** The notice to an unconfirmed account's address that a provider sign-in claiming it was refused. */
export const renderIdentityRefused = (
  data: { to: string; name: string },
  templateDir: string | undefined = config.mailTemplateDir,
): Rendered =>
  fill(loadTemplates('identity_refused', IDENTITY_REFUSED_PLACEHOLDERS, IDENTITY_REFUSED, templateDir), {
    to: data.to,
    name: nameOr(data.name, data.to),
  });
