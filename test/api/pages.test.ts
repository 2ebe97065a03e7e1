import { describe, expect, it } from 'vitest';
import { issueToken } from '#lib/auth/account-tokens.ts';
import { hashOpaqueToken } from '#lib/auth/opaque-tokens.ts';
import { db } from '#lib/db/service.ts';
import { PAGE_CSP } from '#lib/pages/render.ts';
import { type Reply, type TestUser, freshEmail, freshSlug, signUp, useApi } from '../helpers/api.ts';
import { expireInvite } from '../helpers/invites.ts';

/**
 * The pages behind mailed links (lib/pages/), over HTTP: headers, escaping, the one page for every
 * unusable invitation link, and that showing a page uses no token up. Chromium runs them in
 * browser/pages.test.ts.
 */
const api = useApi();
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'; img-src 'self'";

const page = (path: string) => api.call('GET', path, { headers: { accept: 'text/html' } });

const expectPageHeaders = (res: Reply) => {
  expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
  expect(res.headers.get('content-security-policy')).toBe(CSP);
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('referrer-policy')).toBe('no-referrer');
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
};

/** Invites a fresh address to a team named `teamName`; answers the invite and a live link token (as the mailer would make it). */
const invited = async (owner: TestUser, teamName: string) => {
  const slug = freshSlug();
  const made = await api.call('POST', '/api/teams', { token: owner.token, json: { name: teamName, slug } });
  expect(made.status).toBe(201);
  const email = freshEmail('invitee');
  expect((await api.call('POST', `/api/teams/${slug}/invites`, { token: owner.token, json: { email, role: 'ADMIN' } })).status).toBe(201);
  const list = await api.call('GET', `/api/teams/${slug}/invites`, { token: owner.token });
  const invite = list.body.data[0] as { uuid: string; expiresAt: string };
  const token = await issueToken(db(), { purpose: 'invitation', email, inviteUuid: invite.uuid, expiresAt: invite.expiresAt }, new Date());
  return { slug, email, uuid: invite.uuid, token };
};

describe('the pages', () => {
  it('the policy the pages send is the one asked for', () => expect(PAGE_CSP).toBe(CSP));

  it('an invitation page shows the team, inviter, role, address and expiry, every value escaped', async () => {
    const owner = await signUp(api, 'owner');
    const hostile = `<script>alert("x")</script> & 'co'`;
    const { email, uuid, token } = await invited(owner, hostile);
    const res = await page(`/invites/${uuid}?token=${token}`);
    expect(res.status).toBe(200);
    expectPageHeaders(res);
    const body = res.body as string;
    expect(body).not.toContain('<script>alert');
    expect(body).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;co&#39;');
    expect(body).toContain(`data-team="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;co&#39;"`);
    expect(body).toContain('owner Tester');
    expect(body).toContain('<dd>Admin</dd>');
    expect(body).toContain(email);
    expect(body).toMatch(/ UTC<\/time>/u);
    // Our files only: one script and one style sheet, nothing inline.
    expect(body.match(/<script\b[^>]*>/gu)).toEqual(['<script src="/assets/page.js" defer>']);
    expect(body).not.toMatch(/<style|\sstyle=|\son[a-z]+=/u);
  });

  it('any unusable invitation link is one page that says so: unknown, malformed, no token, a foreign token, expired', async () => {
    const owner = await signUp(api, 'owner');
    const one = await invited(owner, 'One');
    const other = await invited(owner, 'Other');
    const paths = [
      `/invites/00000000-0000-4000-8000-000000000000?token=${one.token}`,
      `/invites/not-a-uuid?token=${one.token}`,
      `/invites/${one.uuid}`,
      `/invites/${one.uuid}?token=forged`,
      `/invites/${one.uuid}?token=${other.token}`,
    ];
    await expireInvite(other.uuid);
    paths.push(`/invites/${other.uuid}?token=${other.token}`);
    for (const path of paths) {
      const res = await page(path);
      expect(res.status, path).toBe(200);
      expectPageHeaders(res);
      expect(res.body, path).toContain('This invitation cannot be used');
      expect(res.body, path).not.toContain('<form');
    }
  });

  it('an answered invitation is no longer shown', async () => {
    const owner = await signUp(api, 'owner');
    const { slug, uuid, token } = await invited(owner, 'Answered');
    const list = await api.call('GET', `/api/teams/${slug}/invites`, { token: owner.token });
    expect((await api.call('DELETE', `/api/teams/${slug}/invites/${list.body.data[0].id}`, { token: owner.token })).status).toBe(200);
    expect((await page(`/invites/${uuid}?token=${token}`)).body).toContain('This invitation cannot be used');
  });

  it('the verify and reset pages: a button or a form, and a page that says so without a token', async () => {
    const verify = await page('/verify?token=abc');
    expect(verify.status).toBe(200);
    expectPageHeaders(verify);
    expect(verify.body).toContain('<button type="button" id="confirm">Confirm my address</button>');
    const reset = await page('/reset?token=abc');
    expectPageHeaders(reset);
    expect(reset.body).toMatch(
      /<label for="reset-password">New password<\/label><input id="reset-password" name="reset-password" type="password" autocomplete="new-password" required/u,
    );
    expect(reset.body).toContain('id="reset-confirm"');
    for (const path of ['/verify', '/reset']) {
      const res = await page(path);
      expect(res.status).toBe(200);
      expect(res.body).toContain('This link is incomplete');
    }
    // The token is never written into the page: the script reads it from the address.
    expect((await page('/verify?token=%3Cb%3E')).body).not.toContain('<b>');
  });

  it('the assets: the script, the style sheet and the icon, anything else 404 in the envelope', async () => {
    const js = await api.call('GET', '/assets/page.js');
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('x-content-type-options')).toBe('nosniff');
    expect(js.headers.get('cache-control')).toBe('public, max-age=3600');
    // Small, unminified and readable: the link pages and /account/security's passkey ceremonies.
    expect(String(js.body).length).toBeLessThan(10_240);
    const css = await api.call('GET', '/assets/page.css');
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    const icon = await api.call('GET', '/assets/icon.svg');
    expect(icon.headers.get('content-type')).toBe('image/svg+xml');
    expect(icon.body).toMatch(/^<svg /u);
    for (const name of ['nope.js', 'render.ts', '..%2Fpages.ts']) {
      const res = await api.call('GET', `/assets/${name}`);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
  });

  it('showing a page uses no token up: GET /verify twice, then the POST confirms', async () => {
    const user = await signUp(api, 'verify', { confirmed: false });
    const { data: item } = await db().entities.user.get({ userUuid: user.uuid }).go({ consistent: true });
    if (!item) throw new Error('no user');
    const token = await issueToken(db(), { purpose: 'verification', email: user.email, user: item }, new Date());
    expect((await page(`/verify?token=${token}`)).status).toBe(200);
    expect((await page(`/verify?token=${token}`)).status).toBe(200);
    const res = await api.call('POST', '/api/auth/verify', { json: { token } });
    expect(res.status).toBe(200);
    expect(res.body.data.email_confirmed_at).toEqual(expect.any(String));
  });

  it('showing an invitation page uses no token up: after two GETs its token is still there', async () => {
    const owner = await signUp(api, 'owner');
    const { uuid, token } = await invited(owner, 'Twice');
    for (let i = 0; i < 2; i++) expect((await page(`/invites/${uuid}?token=${token}`)).body).toContain('id="signup"');
    const { data } = await db()
      .entities.accountToken.get({ tokenHash: hashOpaqueToken(token) })
      .go({ consistent: true });
    expect(data?.inviteUuid).toBe(uuid);
  });
});
