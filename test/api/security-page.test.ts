import { describe, expect, it } from 'vitest';
import { config } from '#lib/core/config.ts';
import { signUp, useApi } from '../helpers/api.ts';
import { claimsOf, totpCode } from '../helpers/mfa.ts';

/**
 * /account/security as a browser without JavaScript uses it: plain form posts, the session in a
 * cookie. (The page in Chromium, with its passkey buttons: browser/security-page.test.ts.)
 */
const api = useApi();
const ORIGIN = new URL(config.publicUrl).origin;

/** A browser's cookie jar of one cookie, enough for this page. */
const browser = () => {
  let cookie = '';
  const keep = (headers: Headers) => {
    const set = headers.get('set-cookie');
    if (set) cookie = set.split(';')[0] as string;
  };
  return {
    get cookie() {
      return cookie;
    },
    open: async () => {
      const res = await api.call('GET', '/account/security', { headers: { accept: 'text/html', ...(cookie ? { cookie } : {}) } });
      keep(res.headers);
      return res;
    },
    post: async (fields: Record<string, string>, origin = ORIGIN) => {
      const res = await api.call('POST', '/account/security', {
        raw: new URLSearchParams(fields).toString(),
        headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded', origin, ...(cookie ? { cookie } : {}) },
      });
      keep(res.headers);
      return res;
    },
  };
};

const text = (body: unknown): string => String(body);
/** The first match of `pattern`'s group in the page. */
const pick = (body: unknown, pattern: RegExp): string => {
  const found = pattern.exec(text(body))?.[1];
  if (found === undefined) throw new Error(`not in the page: ${pattern}`);
  return found;
};

describe('the account security page, without JavaScript', () => {
  it('signs in, sets up an authenticator app, activates it, shows the recovery codes once, and signs out', async () => {
    const user = await signUp(api, 'security-page');
    const b = browser();
    const first = await b.open();
    expect(first.status).toBe(200);
    expect(first.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(text(first.body)).toContain('Sign in to manage your second factors');

    const signedIn = await b.post({ action: 'sign-in', email: user.email, password: user.password });
    expect(b.cookie).toMatch(/^roster_security=ey/);
    expect(signedIn.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict; Max-Age=3600/);
    expect(text(signedIn.body)).toContain(user.email);
    expect(text(signedIn.body)).toContain('password only (aal1)');

    const enrolled = await b.post({ action: 'enrol-totp', 'totp-name': 'Phone' });
    const secret = pick(enrolled.body, /<code id="totp-secret">([A-Z2-7]+)<\/code>/);
    const factorId = pick(enrolled.body, /name="factor" value="([0-9a-f-]{36})"/);
    expect(text(enrolled.body)).toMatch(/<div class="qr"><svg/);

    const wrong = await b.post({ action: 'activate-totp', factor: factorId, 'activation-code': '12345' });
    expect(text(wrong.body)).toContain('code: must be the six digits the app shows');

    const activated = await b.post({ action: 'activate-totp', factor: factorId, 'activation-code': totpCode(secret) });
    expect(text(activated.body)).toContain('The authenticator app is active.');
    expect(text(activated.body)).toContain('second factor proven (aal2)');
    expect(text(activated.body).match(/<li><code>/g)).toHaveLength(10);
    expect(claimsOf(b.cookie.slice('roster_security='.length)).aal).toBe('aal2');
    // Shown once: the next visit lists the factor, not the codes.
    const again = await b.open();
    expect(text(again.body)).not.toContain('Your recovery codes');
    expect(text(again.body)).toContain('Phone</span> <span class="muted">Authenticator app, verified');

    const regenerated = await b.post({ action: 'regenerate-codes' });
    expect(text(regenerated.body).match(/<li><code>/g)).toHaveLength(10);

    const out = await b.post({ action: 'sign-out' });
    expect(text(out.body)).toContain('Signed out.');
    expect(out.headers.get('set-cookie')).toMatch(/Max-Age=0/);
  });

  it('an aal1 session steps up with a code (or a recovery code) before it may change factors', async () => {
    const user = await signUp(api, 'security-step-up');
    const b = browser();
    await b.post({ action: 'sign-in', email: user.email, password: user.password });
    const enrolled = await b.post({ action: 'enrol-totp' });
    const secret = pick(enrolled.body, /<code id="totp-secret">([A-Z2-7]+)<\/code>/);
    const factorId = pick(enrolled.body, /name="factor" value="([0-9a-f-]{36})"/);
    const activated = await b.post({ action: 'activate-totp', factor: factorId, 'activation-code': totpCode(secret) });
    const codes = [...text(activated.body).matchAll(/<li><code>([^<]+)<\/code>/g)].map((m) => m[1] as string);

    const later = browser();
    const aal1 = await later.post({ action: 'sign-in', email: user.email, password: user.password });
    expect(text(aal1.body)).toContain('Prove a second factor');
    expect(text(aal1.body)).not.toContain('Add an authenticator app');
    const refused = await later.post({ action: 'remove-factor', factor: factorId });
    expect(text(refused.body)).toMatch(/notice error/);
    const wrongCode = await later.post({ action: 'step-up', factor: factorId, code: '000000' === totpCode(secret) ? '111111' : '000000' });
    expect(text(wrongCode.body)).toContain('The code is wrong');
    const viaRecovery = await later.post({ action: 'recovery-code', recovery: codes[0] as string });
    expect(text(viaRecovery.body)).toContain('second factor proven (aal2)');
    const removed = await later.post({ action: 'remove-factor', factor: factorId });
    expect(text(removed.body)).toContain('The factor is removed.');
    // The last factor gone, the session is aal1 again and the account has none.
    expect(text(removed.body)).toContain('None yet');
  });

  it('refuses a form from another origin (403) and shows the sign-in form for a missing or ended session', async () => {
    const user = await signUp(api, 'security-csrf');
    const b = browser();
    await b.post({ action: 'sign-in', email: user.email, password: user.password });
    const forged = await b.post({ action: 'enrol-totp' }, 'https://evil.example');
    expect(forged.status).toBe(403);
    expect((forged.body as { error: { code: string } }).error.code).toBe('forbidden');
    // A browser's post from another site: no Referer means `Origin: null`, and Sec-Fetch-Site says whose.
    const crossSite = await api.call('POST', '/account/security', {
      raw: 'action=sign-in&email=a%40example.com&password=whatever',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'null', 'sec-fetch-site': 'cross-site' },
    });
    expect(crossSite.status).toBe(403);
    const wrongPassword = await browser().post({ action: 'sign-in', email: user.email, password: 'not the password at all' });
    expect(text(wrongPassword.body)).toContain('The e-mail address or the password is wrong.');
    const stranger = browser();
    const noSession = await stranger.post({ action: 'enrol-totp' });
    expect(text(noSession.body)).toContain('Your session has ended');
    const forgedToken = await stranger.post({ action: 'adopt', token: 'not-a-token' });
    expect(text(forgedToken.body)).toContain('Sign in to manage');
    // No token was kept: the cookie the page sent back is the empty one that ends it.
    expect(stranger.cookie).toBe('roster_security=');
  });
});
