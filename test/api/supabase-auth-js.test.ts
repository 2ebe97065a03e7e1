/**
 * @supabase/auth-js, unchanged, against the Supabase-compatible API (/auth/v1, docs/supabase.md):
 * its public methods as an app calls them, every step asserting what auth-js returns. The links it
 * would follow from the mail are made as the mailer makes them (issueToken in the server's table).
 */
import type { Session } from '@supabase/auth-js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type Api, freshEmail, useApi } from '../helpers/api.ts';
import { authClient } from '../helpers/auth-js.ts';

const api = useApi();
const PASSWORD = 'correct horse battery staple';

const client = () => authClient(api);

/** The token of the link the mailer would send for `purpose` (its `token` is GoTrue's `token_hash`). */
const mailedToken = async (target: Api, email: string, purpose: 'verification' | 'recovery' | 'email_change') => {
  const db = await (target.table as NonNullable<Api['table']>)();
  const claim = (await db.entities.emailClaim.get({ email }).go({ consistent: true })).data;
  const u = claim && (await db.entities.user.get({ userUuid: claim.userUuid }).go({ consistent: true })).data;
  if (!u) throw new Error(`no account has ${email}`);
  const { issueToken } = await import('#lib/auth/account-tokens.ts');
  return issueToken(db, { purpose, email: purpose === 'email_change' ? (u.newEmail as string) : email, user: u }, new Date());
};

const signedUp = async (name: string) => {
  const email = freshEmail(name);
  const c = client();
  const { data, error } = await c.auth.signUp({ email, password: PASSWORD, options: { data: { firstName: ' Ada ', lastName: 'Lee' } } });
  expect(error).toBeNull();
  return { ...c, email, session: data.session as Session };
};

// Tests that move the clock (a session grown old) put it back.
afterEach(() => vi.useRealTimers());

describe('@supabase/auth-js against /auth/v1', () => {
  it('signUp: a session and the user, names from data and the rest as user_metadata, the address not confirmed', async () => {
    const email = freshEmail('authjs-signup');
    const { auth, events } = client();
    const { data, error } = await auth.signUp({
      email,
      password: PASSWORD,
      options: { data: { firstName: 'Ada', lastName: 'Lee', plan: 'pro' } },
    });
    expect(error).toBeNull();
    expect(data.session?.access_token).toMatch(/^ey/);
    expect(data.session?.token_type).toBe('bearer');
    expect(data.user).toMatchObject({ email, aud: 'authenticated', user_metadata: { firstName: 'Ada', lastName: 'Lee', plan: 'pro' } });
    expect(data.user).not.toHaveProperty('email_confirmed_at');
    expect(events).toEqual(['INITIAL_SESSION', 'SIGNED_IN']);
    const { data: got } = await auth.getSession();
    expect(got.session?.access_token).toBe(data.session?.access_token);
  });

  it('signUp: an address taken, a weak password and a bad address answer as GoTrue does', async () => {
    const { email } = await signedUp('authjs-taken');
    const { auth } = client();
    const taken = await auth.signUp({ email, password: PASSWORD });
    expect(taken.error).toMatchObject({ status: 422, code: 'user_already_exists' });
    const weak = await auth.signUp({ email: freshEmail('authjs-weak'), password: 'password' });
    expect(weak.error).toMatchObject({ status: 422, code: 'weak_password' });
    const short = await auth.signUp({ email: freshEmail('authjs-short'), password: 'short' });
    expect(short.error).toMatchObject({ status: 422, code: 'weak_password' });
    expect((short.error as unknown as { reasons: string[] }).reasons).toEqual(['length']);
    const bad = await auth.signUp({ email: 'not an address', password: PASSWORD });
    expect(bad.error).toMatchObject({ status: 400, code: 'validation_failed' });
  });

  it('signInWithPassword: a session, or invalid_credentials; getUser and getClaims read it', async () => {
    const { email } = await signedUp('authjs-signin');
    const { auth, events } = client();
    const wrong = await auth.signInWithPassword({ email, password: 'not the password' });
    expect(wrong.error).toMatchObject({ status: 400, code: 'invalid_credentials' });
    // An empty password is a bad request, not a weak password: weak_password is for new ones only.
    const empty = await auth.signInWithPassword({ email, password: '' });
    expect(empty.error).toMatchObject({ status: 400, code: 'validation_failed' });
    const { data, error } = await auth.signInWithPassword({ email, password: PASSWORD });
    expect(error).toBeNull();
    expect(data.user?.email).toBe(email);
    expect(events.at(-1)).toBe('SIGNED_IN');
    const user = await auth.getUser();
    expect(user.error).toBeNull();
    expect(user.data.user).toMatchObject({ email, user_metadata: { firstName: 'Ada' } });
    // (Names are kept trimmed, as /api/auth/signup keeps them: ' Ada ' was sent.)
    // getClaims checks the RS256 signature with the key set at {url}/.well-known/jwks.json.
    const claims = await auth.getClaims();
    expect(claims.error).toBeNull();
    expect(claims.data?.claims).toMatchObject({ sub: user.data.user?.id, email, aud: 'authenticated', aal: 'aal1', role: 'authenticated' });
    expect(claims.data?.header.alg).toBe('RS256');
  });

  it('refreshSession: new tokens, TOKEN_REFRESHED; a refresh token used twice ends the session', async () => {
    const { auth, events, session } = await signedUp('authjs-refresh');
    const { data, error } = await auth.refreshSession();
    expect(error).toBeNull();
    expect(data.session?.refresh_token).not.toBe(session.refresh_token);
    expect(data.session?.access_token).toMatch(/^ey/);
    expect(events.at(-1)).toBe('TOKEN_REFRESHED');
    expect((await auth.getUser()).error).toBeNull();
    // Past the grace window, the rotated token used again: GoTrue's refresh_token_not_found, and the session is gone.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 60_000 });
    const other = client();
    const reused = await other.auth.refreshSession({ refresh_token: session.refresh_token });
    expect(reused.error).toMatchObject({ status: 400, code: 'refresh_token_not_found' });
  });

  it('verifyOtp with a confirmation link: the address confirmed, and a session (amr otp)', async () => {
    const { email } = await signedUp('authjs-verify');
    const { auth, events } = client();
    const tokenHash = await mailedToken(api, email, 'verification');
    const { data, error } = await auth.verifyOtp({ token_hash: tokenHash, type: 'signup' });
    expect(error).toBeNull();
    expect(data.user?.email_confirmed_at).toMatch(/^\d{4}-/);
    expect(data.session?.access_token).toMatch(/^ey/);
    expect(events.at(-1)).toBe('SIGNED_IN');
    const claims = await auth.getClaims();
    expect((claims.data?.claims.amr as { method: string }[])[0]?.method).toBe('otp');
    // The link is used up.
    const again = await client().auth.verifyOtp({ token_hash: tokenHash, type: 'signup' });
    expect(again.error).toMatchObject({ status: 403, code: 'otp_expired' });
  });

  it('resend: a new confirmation link by address, the same answer for an unknown one', async () => {
    const { email } = await signedUp('authjs-resend');
    const { auth } = client();
    expect((await auth.resend({ type: 'signup', email })).error).toBeNull();
    expect((await auth.resend({ type: 'signup', email: freshEmail('authjs-nobody') })).error).toBeNull();
  });

  it('updateUser: data (names and metadata), then a new password from a fresh session, USER_UPDATED', async () => {
    const { auth, events, email } = await signedUp('authjs-update');
    const named = await auth.updateUser({ data: { firstName: 'Grace', team: 'compilers' } });
    expect(named.error).toBeNull();
    expect(named.data.user?.user_metadata).toEqual({ firstName: 'Grace', lastName: 'Lee', team: 'compilers' });
    expect(events.at(-1)).toBe('USER_UPDATED');
    const changed = await auth.updateUser({ password: 'another fine passphrase' });
    expect(changed.error).toBeNull();
    const { auth: again } = client();
    expect((await again.signInWithPassword({ email, password: 'another fine passphrase' })).error).toBeNull();
    expect((await again.signInWithPassword({ email, password: PASSWORD })).error).toMatchObject({ code: 'invalid_credentials' });
  });

  it('updateUser: user_metadata stays within 20 keys and 2 KB, whatever the requests add up to', async () => {
    const { auth } = await signedUp('authjs-metadata');
    const keys = (from: number, count: number) => Object.fromEntries(Array.from({ length: count }, (_, n) => [`k${from + n}`, n]));
    expect((await auth.updateUser({ data: keys(0, 15) })).error).toBeNull();
    expect((await auth.updateUser({ data: keys(15, 10) })).error).toMatchObject({ status: 400, code: 'validation_failed' });
    expect((await auth.updateUser({ data: keys(0, 21) })).error).toMatchObject({ status: 400, code: 'validation_failed' });
    expect((await auth.updateUser({ data: { note: 'x'.repeat(3000) } })).error).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(Object.keys((await auth.getUser()).data.user?.user_metadata ?? {})).toHaveLength(17);
  });

  it('updateUser: an old session changes the password only with current_password', async () => {
    const { auth } = await signedUp('authjs-stale');
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 20 * 60_000 });
    const refused = await auth.updateUser({ password: 'yet another passphrase' });
    expect(refused.error).toMatchObject({ status: 400, code: 'validation_failed' });
    const wrong = await auth.updateUser({ password: 'yet another passphrase', current_password: 'not it' });
    expect(wrong.error).toMatchObject({ status: 400, code: 'validation_failed' });
    const taken = await auth.updateUser({ password: 'yet another passphrase', current_password: PASSWORD });
    expect(taken.error).toBeNull();
  });

  it('updateUser: a new e-mail address is pending until its link is used (verifyOtp email_change)', async () => {
    const { auth, email } = await signedUp('authjs-email');
    const next = freshEmail('authjs-email-next');
    const pending = await auth.updateUser({ email: next });
    expect(pending.error).toBeNull();
    expect(pending.data.user).toMatchObject({ email, new_email: next });
    const { data, error } = await client().auth.verifyOtp({
      token_hash: await mailedToken(api, email, 'email_change'),
      type: 'email_change',
    });
    expect(error).toBeNull();
    expect(data.user?.email).toBe(next);
    expect(data.user).not.toHaveProperty('new_email');
  });

  it('resetPasswordForEmail, verifyOtp recovery, updateUser password: the reset flow', async () => {
    const { email } = await signedUp('authjs-reset');
    const { auth, events } = client();
    expect((await auth.resetPasswordForEmail(email)).error).toBeNull();
    expect((await auth.resetPasswordForEmail(freshEmail('authjs-unknown'))).error).toBeNull();
    const { data, error } = await auth.verifyOtp({ token_hash: await mailedToken(api, email, 'recovery'), type: 'recovery' });
    expect(error).toBeNull();
    expect(data.session?.access_token).toMatch(/^ey/);
    // auth-js tells the app a reset link was used, so it shows the new-password form.
    expect(events.at(-1)).toBe('PASSWORD_RECOVERY');
    expect(((await auth.getClaims()).data?.claims.amr as { method: string }[])[0]?.method).toBe('recovery');
    expect((await auth.updateUser({ password: 'a new passphrase for sure' })).error).toBeNull();
    expect((await client().auth.signInWithPassword({ email, password: 'a new passphrase for sure' })).error).toBeNull();
  });

  it('signOut: others ends the other sessions, local this one, global every one', async () => {
    const { email } = await signedUp('authjs-signout');
    const [a, b, c] = [client(), client(), client()];
    for (const x of [a, b, c]) expect((await x.auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
    expect((await a.auth.signOut({ scope: 'others' })).error).toBeNull();
    expect((await a.auth.getUser()).error).toBeNull();
    expect((await b.auth.getUser()).error).toMatchObject({ status: 403, code: 'bad_jwt' });
    expect((await a.auth.signOut({ scope: 'local' })).error).toBeNull();
    expect(a.events.at(-1)).toBe('SIGNED_OUT');
    expect((await a.auth.getSession()).data.session).toBeNull();
    const [d, e] = [client(), client()];
    for (const x of [d, e]) expect((await x.auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
    const eToken = (await e.auth.getSession()).data.session?.access_token as string;
    expect((await d.auth.signOut()).error).toBeNull();
    expect((await e.auth.getUser(eToken)).error).toMatchObject({ status: 403, code: 'bad_jwt' });
    expect(c.events).toContain('SIGNED_IN');
  });

  it('updateUser and verifyOtp: an address another account holds is email_exists', async () => {
    const { auth } = await signedUp('authjs-mine');
    const { email: theirs } = await signedUp('authjs-theirs');
    expect((await auth.updateUser({ email: theirs })).error).toMatchObject({ status: 422, code: 'email_exists' });
    // A change asked for while the address was free, taken by a sign-up before its link was used.
    const { auth: mover, email } = await signedUp('authjs-mover');
    const wanted = freshEmail('authjs-wanted');
    expect((await mover.updateUser({ email: wanted })).error).toBeNull();
    const link = await mailedToken(api, email, 'email_change');
    expect((await client().auth.signUp({ email: wanted, password: PASSWORD })).error).toBeNull();
    expect((await client().auth.verifyOtp({ token_hash: link, type: 'email_change' })).error).toMatchObject({
      status: 422,
      code: 'email_exists',
    });
  });
});

describe('the GoTrue wire, as auth-js does not send it', () => {
  it("answers a body that is not JSON with bad_json, and a missing grant with validation_failed, in GoTrue's shape", async () => {
    const notJson = await api.call('POST', '/auth/v1/signup', { raw: '{"email":', headers: { 'content-type': 'application/json' } });
    expect([notJson.status, notJson.body.code, notJson.headers.get('x-supabase-api-version')]).toEqual([400, 'bad_json', '2024-01-01']);
    const noGrant = await api.call('POST', '/auth/v1/token', { json: { email: 'a@example.com', password: PASSWORD } });
    expect([noGrant.status, noGrant.body.code]).toEqual([400, 'validation_failed']);
    expect(noGrant.body.msg).toMatch(/grant_type/);
    const codes = await api.call('POST', '/auth/v1/verify', { json: { type: 'signup', token: '123456', email: 'a@example.com' } });
    expect([codes.status, codes.body.code]).toEqual([400, 'validation_failed']);
    const phone = await api.call('POST', '/auth/v1/resend', { json: { type: 'sms', phone: '+15555550100' } });
    expect([phone.status, phone.body.code]).toEqual([400, 'validation_failed']);
  });
});
