/**
 * @supabase/auth-js's provider sign-in, unchanged, against the Supabase-compatible API (docs/sso.md):
 * signInWithOAuth with the PKCE flow, the provider's own pages (oidc-provider on loopback), Roster's
 * callback, exchangeCodeForSession; then linkIdentity, getUserIdentities and unlinkIdentity.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { signUp, useApi } from '../helpers/api.ts';
import { authClient } from '../helpers/auth-js.ts';
import { challengeAndVerify, enrolTotp, totpCode } from '../helpers/mfa.ts';
import { APP_URL, CALLBACK, PUBLIC_URL, backAtApp, callback, pkce } from '../helpers/oauth.ts';
import { startIdp } from '../helpers/oidc-idp.ts';

const google = await startIdp({ redirectUri: CALLBACK, emailInIdToken: true });
const okta = await startIdp({ redirectUri: CALLBACK, clientId: 'roster-okta' });
process.env.PUBLIC_URL = PUBLIC_URL;
process.env.OAUTH_REDIRECT_URLS = APP_URL;
process.env.OAUTH_PROVIDERS = JSON.stringify([
  { id: 'google', type: 'oidc', issuer: google.issuer, clientId: google.clientId },
  { id: 'okta', type: 'oidc', issuer: okta.issuer, clientId: okta.clientId },
]);
process.env.OAUTH_CLIENT_SECRETS = JSON.stringify({ google: google.clientSecret, okta: okta.clientSecret });
afterAll(() => Promise.all([google.stop(), okta.stop()]));

const api = useApi();
let n = 0;
const person = (idp: typeof google, email = `aj-${Date.now().toString(36)}-${++n}@example.com`) => {
  const subject = `aj-${++n}`;
  idp.people.set(subject, { email, email_verified: true, given_name: 'Grace', family_name: 'Hopper' });
  return { subject, email };
};

/** The browser's part: Roster's authorize (302), the provider's pages, Roster's callback (302 to the app). */
const browse = async (url: string, idp: typeof google, subject: string) => {
  const start = await fetch(url, { redirect: 'manual' });
  expect(start.status).toBe(302);
  const back = await callback(api, await idp.signIn(start.headers.get('location') as string, subject));
  expect(back.status).toBe(302);
  return backAtApp(back.headers.get('location'));
};

describe('@supabase/auth-js provider sign-in against /auth/v1', () => {
  it('signInWithOAuth and exchangeCodeForSession: a session for the new account', async () => {
    const { auth, events } = authClient(api, { flowType: 'pkce' });
    const { subject, email } = person(google);
    const started = await auth.signInWithOAuth({ provider: 'google', options: { redirectTo: APP_URL, skipBrowserRedirect: true } });
    expect(started.error).toBeNull();
    const url = new URL(started.data.url as string);
    expect(url.pathname).toBe('/auth/v1/authorize');
    expect(url.searchParams.get('code_challenge_method')).toBe('s256');
    const { code } = await browse(started.data.url as string, google, subject);
    const exchanged = await auth.exchangeCodeForSession(code as string);
    expect(exchanged.error).toBeNull();
    expect(exchanged.data.user?.email).toBe(email);
    expect(exchanged.data.user?.app_metadata).toEqual({ provider: 'google', providers: ['google'] });
    expect(events).toContain('SIGNED_IN');
    const identities = await auth.getUserIdentities();
    expect(identities.data?.identities.map((i) => i.provider)).toEqual(['google']);
    // The code works once: auth-js reports GoTrue's error.
    const again = await authClient(api, { flowType: 'pkce' }).auth.exchangeCodeForSession(code as string);
    expect(again.error).not.toBeNull();
  });

  it('refuses the implicit flow (tokens in a URL) with a message that says what to do', async () => {
    const { auth } = authClient(api);
    const started = await auth.signInWithOAuth({ provider: 'google', options: { redirectTo: APP_URL, skipBrowserRedirect: true } });
    const res = await fetch(started.data.url as string, { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { msg: string }).msg).toMatch(/flowType: 'pkce'/);
  });

  it('linkIdentity, getUserIdentities, unlinkIdentity: never the last way in', async () => {
    const owner = await signUp(api, 'aj-owner');
    const { auth } = authClient(api, { flowType: 'pkce' });
    expect((await auth.signInWithPassword({ email: owner.email, password: owner.password })).error).toBeNull();
    const work = person(okta);
    const linking = await auth.linkIdentity({ provider: 'okta' as 'google', options: { redirectTo: APP_URL, skipBrowserRedirect: true } });
    expect(linking.error).toBeNull();
    expect(linking.data.url).toContain(okta.issuer);
    // linkIdentity answered the provider's URL itself: the browser goes there, then back through Roster.
    const back = await callback(api, await okta.signIn(linking.data.url as string, work.subject));
    const { code } = backAtApp(back.headers.get('location'));
    expect((await auth.exchangeCodeForSession(code as string)).data.user?.id).toBe(owner.uuid);
    const listed = await auth.getUserIdentities();
    expect(listed.data?.identities.map((i) => i.provider)).toEqual(['email', 'okta']);
    const atOkta = listed.data?.identities.find((i) => i.provider === 'okta');
    expect((await auth.unlinkIdentity(atOkta as NonNullable<typeof atOkta>)).error).toBeNull();
    expect((await auth.getUserIdentities()).data?.identities.map((i) => i.provider)).toEqual(['email']);
    // Unlinked twice: GoTrue's not_found.
    const twice = await auth.unlinkIdentity(atOkta as NonNullable<typeof atOkta>);
    expect(twice.error?.code).toBe('not_found');
  });

  it("answers GoTrue's codes: the last way in, aal2 for an account with a factor, a spent code", async () => {
    const { auth } = authClient(api, { flowType: 'pkce' });
    const { subject } = person(google);
    const started = await auth.signInWithOAuth({ provider: 'google', options: { redirectTo: APP_URL, skipBrowserRedirect: true } });
    const { code } = await browse(started.data.url as string, google, subject);
    const session = (await auth.exchangeCodeForSession(code as string)).data.session;
    const only = (await auth.getUserIdentities()).data?.identities[0];
    const last = await auth.unlinkIdentity(only as NonNullable<typeof only>);
    expect(last.error?.code).toBe('validation_failed');
    expect(last.error?.message).toMatch(/only way to sign in/);
    // With a verified factor, linking and unlinking need aal2 (insufficient_aal), as adding a factor does.
    const { factorId, secret } = await enrolTotp(api, { token: session?.access_token as string });
    await challengeAndVerify(api, session?.access_token as string, factorId, totpCode(secret));
    const aal1 = session?.access_token as string;
    const link = await api.call(
      'GET',
      `/auth/v1/user/identities/authorize?provider=okta&redirect_to=${encodeURIComponent(APP_URL)}&code_challenge=${pkce().challenge}&code_challenge_method=s256&skip_http_redirect=true`,
      {
        headers: { authorization: `Bearer ${aal1}` },
      },
    );
    expect(link.status).toBe(403);
    expect(link.body.error_code).toBe('insufficient_aal');
    const unlink = await api.call('DELETE', `/auth/v1/user/identities/${only?.identity_id}`, {
      headers: { authorization: `Bearer ${aal1}` },
    });
    expect(unlink.status).toBe(403);
    expect(unlink.body.error_code).toBe('insufficient_aal');
    const seedLink = await api.call('POST', '/api/auth/identities', {
      token: aal1,
      json: { provider: 'okta', redirectTo: APP_URL, codeChallenge: pkce().challenge },
    });
    expect(seedLink.status).toBe(403);
    expect(seedLink.body.error.code).toBe('mfa_required');
    const seedUnlink = await api.call('DELETE', `/api/auth/identities/${only?.identity_id}`, { token: aal1 });
    expect(seedUnlink.status).toBe(403);
    const spent = await api.call('POST', '/auth/v1/token?grant_type=pkce', { json: { auth_code: code, code_verifier: pkce().verifier } });
    expect(spent.status).toBe(403);
    expect(spent.body.error_code).toBe('otp_expired');
  });
});

describe('GoTrue linking an identity another account holds', () => {
  it("answers exchangeCodeForSession GoTrue's identity_already_exists, and links nothing", async () => {
    const holder = authClient(api, { flowType: 'pkce' });
    const { subject } = person(google);
    const started = await holder.auth.signInWithOAuth({ provider: 'google', options: { redirectTo: APP_URL, skipBrowserRedirect: true } });
    expect(
      (await holder.auth.exchangeCodeForSession((await browse(started.data.url as string, google, subject)).code as string)).error,
    ).toBeNull();
    const other = await signUp(api, 'aj-other');
    const { auth } = authClient(api, { flowType: 'pkce' });
    expect((await auth.signInWithPassword({ email: other.email, password: other.password })).error).toBeNull();
    const linking = await auth.linkIdentity({ provider: 'google', options: { redirectTo: APP_URL, skipBrowserRedirect: true } });
    const back = await callback(api, await google.signIn(linking.data.url as string, subject));
    const refused = await auth.exchangeCodeForSession(backAtApp(back.headers.get('location')).code as string);
    expect(refused.error?.code).toBe('identity_already_exists');
    expect((await auth.getUserIdentities()).data?.identities.map((i) => i.provider)).toEqual(['email']);
  });
});

describe('GoTrue settings', () => {
  it('lists the configured providers beside e-mail, as auth-js and Supabase UI read them', async () => {
    const res = await api.call('GET', '/auth/v1/settings');
    expect(res.body.external).toEqual({ email: true, phone: false, anonymous_users: false, google: true, okta: true });
  });
});
