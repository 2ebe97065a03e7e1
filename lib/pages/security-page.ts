import type { StaticAnswer } from '#lib/http/static.ts';
import type { Factor } from '#lib/wire/mfa.ts';
import { field } from './forms.ts';
import { html, renderPage } from './render.ts';

/**
 * The markup of /account/security (docs/mfa.md, "The account security page"): plain forms that
 * post to the page itself, so everything but passkeys works without JavaScript; the passkey
 * buttons are the script's (lib/pages/page.js), since WebAuthn is a browser API. What the page
 * does is lib/identity/mfa/security-page.ts.
 */

const TITLE = 'Account security';

/** A form posting `action` (and `fields`) back to the page, with one button. */
const form = (action: string, button: string, fields = '', extra = ''): string =>
  `<form method="post" action="/account/security"${extra}><input type="hidden" name="action" value="${action}">${fields}<button type="submit">${button}</button></form>`;

const hidden = (name: string, value: string): string => `<input type="hidden" name="${name}" value="${html(value)}">`;

const notice = (text: string | undefined, kind: 'done' | 'error' = 'done'): string =>
  text ? `      <p class="notice ${kind}" role="status">${html(text)}</p>\n` : '';

/** Signed out: e-mail and password, or a passkey alone (the script shows that button where WebAuthn exists). */
export const signInPage = (message?: string): StaticAnswer =>
  renderPage({
    title: TITLE,
    data: { page: 'security' },
    main: `${notice(message, 'error')}      <p>Sign in to manage your second factors and passkeys.</p>
      ${form(
        'sign-in',
        'Sign in',
        `${field('email', 'E-mail', 'email', 'username webauthn')}${field('password', 'Password', 'password', 'current-password webauthn')}`,
        ' id="signin"',
      )}
      <p><button type="button" id="passkey-sign-in" class="secondary" hidden>Sign in with a passkey</button></p>`,
  });

export interface SecurityView {
  email: string;
  aal: 'aal1' | 'aal2';
  factors: Factor[];
  /** The access token, for the script's passkey calls only (the cookie is HttpOnly). */
  token: string;
  /** What the last action did, or why it did not. */
  message?: { text: string; kind: 'done' | 'error' } | undefined;
  /** A TOTP factor just set up: its key, shown this once, and the form that activates it. */
  enrolment?: { factorId: string; secret: string; qrCode: string } | undefined;
  /** Recovery codes just made, shown this once. */
  recoveryCodes?: string[] | undefined;
}

const factorRow = (f: Factor, aal: 'aal1' | 'aal2'): string => {
  const kind = f.factor_type === 'webauthn' ? 'Passkey' : 'Authenticator app';
  const name = f.friendly_name || kind;
  // A verified factor goes only from aal2 (the API's rule); an unverified one from any session.
  const removable = f.status === 'unverified' || aal === 'aal2';
  const about = name === kind ? f.status : `${kind}, ${f.status}`;
  return `        <li><span class="factor-name">${html(name)}</span> <span class="muted">${about}</span>${
    removable ? ` ${form('remove-factor', `Remove ${html(name)}`, hidden('factor', f.id), ' class="inline"')}` : ''
  }</li>`;
};

/** Signed in: the factors, what the session may do, and the forms for it. */
export const securityPage = (view: SecurityView): StaticAnswer => {
  const verified = view.factors.filter((f) => f.status === 'verified');
  const totps = verified.filter((f) => f.factor_type === 'totp');
  const passkey = verified.find((f) => f.factor_type === 'webauthn');
  const mayAdd = verified.length === 0 || view.aal === 'aal2';
  const stepUp =
    view.aal === 'aal1' && verified.length > 0
      ? `      <section id="step-up">
        <h2>Prove a second factor</h2>
        <p>This session used your password only. Prove a factor to manage them.</p>
        ${
          totps.length > 0
            ? form(
                'step-up',
                'Verify',
                `${hidden('factor', (totps[0] as Factor).id)}${field('code', 'Code from your app', 'text', 'one-time-code', ' inputmode="numeric" pattern="[0-9]{6}" maxlength="6"')}`,
              )
            : ''
        }
        ${form('recovery-code', 'Use a recovery code', field('recovery', 'Recovery code', 'text', 'off'))}
        ${passkey ? `<button type="button" id="passkey-step-up" class="secondary" data-factor="${html(passkey.id)}" hidden>Use a passkey</button>` : ''}
      </section>\n`
      : '';
  const enrolment = view.enrolment
    ? `      <section id="enrolment">
        <h2>Scan this with your authenticator app</h2>
        <div class="qr">${view.enrolment.qrCode}</div>
        <p>Or type the key: <code id="totp-secret">${html(view.enrolment.secret)}</code></p>
        ${form('activate-totp', 'Activate', `${hidden('factor', view.enrolment.factorId)}${field('activation-code', 'Code from your app', 'text', 'one-time-code', ' inputmode="numeric" pattern="[0-9]{6}" maxlength="6"')}`)}
      </section>\n`
    : '';
  const codes = view.recoveryCodes
    ? `      <section id="recovery-codes">
        <h2>Your recovery codes</h2>
        <p>Each works once, in place of a factor you lost. Keep them somewhere safe: they are not shown again.</p>
        <ul class="codes">${view.recoveryCodes.map((c) => `<li><code>${html(c)}</code></li>`).join('')}</ul>
      </section>\n`
    : '';
  return renderPage({
    title: TITLE,
    data: { page: 'security', token: view.token, aal: view.aal },
    main: `${view.message ? notice(view.message.text, view.message.kind) : ''}      <dl class="facts">
        <dt>Signed in as</dt><dd id="email">${html(view.email)}</dd>
        <dt>This session</dt><dd id="level">${view.aal === 'aal2' ? 'second factor proven (aal2)' : 'password only (aal1)'}</dd>
      </dl>
${stepUp}${enrolment}${codes}      <section id="factors">
        <h2>Factors</h2>
        ${view.factors.length ? `<ul class="factors">\n${view.factors.map((f) => factorRow(f, view.aal)).join('\n')}\n        </ul>` : '<p>None yet: a stolen password is a stolen account. Add one.</p>'}
        ${
          mayAdd
            ? `${form('enrol-totp', 'Add an authenticator app', field('totp-name', 'Name', 'text', 'off', ' maxlength="100" value="Authenticator app"'))}
        <p><button type="button" id="passkey-register" class="secondary" hidden>Add a passkey</button></p>`
            : '<p>Prove a second factor above to add another.</p>'
        }
        ${view.aal === 'aal2' && verified.length > 0 ? form('regenerate-codes', 'New recovery codes') : ''}
      </section>
      ${form('sign-out', 'Sign out', '', ' class="sign-out"')}`,
  });
};
