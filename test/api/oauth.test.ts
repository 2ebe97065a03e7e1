import { afterAll, describe, expect, it } from 'vitest';
import { callApi, signUp, useApi } from '../helpers/api.ts';
import {
  APP_URL,
  CALLBACK,
  PUBLIC_URL,
  backAtApp,
  callback,
  pkce,
  resetThroughMailbox,
  startAt,
  startPath,
  throughProvider,
  trade,
} from '../helpers/oauth.ts';
import { type Idp, startIdp } from '../helpers/oidc-idp.ts';
import { challengeAndVerify, enrolTotp, totpCode } from '../helpers/mfa.ts';

// Two real OpenID providers on loopback: "google" (the e-mail claims in the ID token, as Google
// sends them) and "okta" (in userinfo only, as oidc-provider's default).
const google = await startIdp({ redirectUri: CALLBACK, emailInIdToken: true });
const okta = await startIdp({ redirectUri: CALLBACK, clientId: 'roster-okta' });
process.env.PUBLIC_URL = PUBLIC_URL;
process.env.OAUTH_REDIRECT_URLS = `${APP_URL},https://app.example.com/welcome`;
process.env.OAUTH_PROVIDERS = JSON.stringify([
  { id: 'google', type: 'oidc', issuer: google.issuer, clientId: google.clientId },
  { id: 'okta', type: 'oidc', issuer: okta.issuer, clientId: okta.clientId },
]);
process.env.OAUTH_CLIENT_SECRETS = JSON.stringify({ google: google.clientSecret, okta: okta.clientSecret });
afterAll(() => Promise.all([google.stop(), okta.stop()]));

const api = useApi();
const db = async () => (await import('#lib/db/service.ts')).db();

let people = 0;
const person = (idp: Idp, email: string, verified = true, subject = `person-${++people}`) => {
  idp.people.set(subject, { email, email_verified: verified, given_name: 'Ada', family_name: 'Lovelace' });
  return subject;
};
const freshAddress = (name: string) => `${name}-${Date.now().toString(36)}-${++people}@example.com`;

const signInAt = async (idp: Idp, provider: string, subject: string, options: { gotrue?: boolean } = {}) => {
  const { query, verifier } = await throughProvider(api, provider, (url) => idp.signIn(url, subject), options);
  return { query, verifier };
};

const sessionThrough = async (idp: Idp, provider: string, subject: string) => {
  const { query, verifier } = await signInAt(idp, provider, subject);
  expect(query.error_description).toBeUndefined();
  const res = await trade(api, query.code as string, verifier);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.session;
};

const messagesOf = async (userUuid: string) =>
  (await (await db()).entities.outboxMessage.scan.where((a, op) => op.eq(a.userUuid, userUuid)).go()).data;

/** The message of `kind` to `userUuid`, planned and rendered as the mailer would send it. */
const rendered = async (userUuid: string, kind: string) => {
  const [{ outboxRefOf }, { plan }] = await Promise.all([import('#lib/mail/outbox-ref.ts'), import('#lib/mail/plans.ts')]);
  const message = (await messagesOf(userUuid)).find((m) => m.kind === kind);
  const ref = outboxRefOf(message ?? {});
  if (!ref) throw new Error(`no ${kind} message`);
  const mail = await plan(await db(), ref, new Date());
  if ('notSent' in mail) throw new Error(mail.notSent);
  return mail.render('unused', 'unused');
};

describe('provider sign-in: accounts', () => {
  it('makes a confirmed account without a password for a new verified address, and the code signs it in', async () => {
    const email = freshAddress('new');
    const subject = person(google, email);
    const session = await sessionThrough(google, 'google', subject);
    const user = session.user;
    expect(user.email).toBe(email);
    expect(user.email_confirmed_at).not.toBeNull();
    expect(user.app_metadata).toEqual({ provider: 'google', providers: ['google'] });
    expect(user.user_metadata).toMatchObject({ firstName: 'Ada', lastName: 'Lovelace' });
    expect(user.identities).toEqual([expect.objectContaining({ provider: 'google', id: subject, email, user_id: user.id })]);
    const claims = JSON.parse(Buffer.from(session.access_token.split('.')[1], 'base64url').toString());
    expect(claims.amr).toEqual([expect.objectContaining({ method: 'oauth' })]);
    expect(claims.aal).toBe('aal1');
    // No password to guess: a password sign-in is refused like any wrong one.
    const password = await api.call('POST', '/api/auth/signin', { json: { email, password: 'correct horse battery staple' } });
    expect(password.status).toBe(401);
  });

  it('signs the same identity in to the same account the next time (userinfo provider too)', async () => {
    const email = freshAddress('again');
    const subject = person(okta, email);
    const first = await sessionThrough(okta, 'okta', subject);
    const second = await sessionThrough(okta, 'okta', subject);
    expect(second.user.id).toBe(first.user.id);
    expect(second.user.identities).toHaveLength(1);
  });

  it('links to a confirmed account whose password came through its mailbox, and tells its owner', async () => {
    const owner = await signUp(api, 'linked');
    await resetThroughMailbox(api, owner, 'a passphrase from the mailbox');
    const subject = person(google, owner.email);
    const session = await sessionThrough(google, 'google', subject);
    expect(session.user.id).toBe(owner.uuid);
    expect(session.user.app_metadata).toEqual({ provider: 'email', providers: ['email', 'google'] });
    expect(session.user.identities.map((i: { provider: string }) => i.provider)).toEqual(['email', 'google']);
    const notice = await rendered(owner.uuid, 'identities_changed');
    expect(notice.subject).toBe('The ways to sign in to your Roster account changed');
    expect(notice.text).toContain(`You can now sign in with: password, google (${owner.email}).`);
    // The password still works.
    const password = await api.call('POST', '/api/auth/signin', {
      json: { email: owner.email, password: 'a passphrase from the mailbox' },
    });
    expect(password.status).toBe(200);
  });

  it('refuses a confirmed account whose password its signer-up chose (pre-hijacking), until a reset proves the mailbox', async () => {
    // Someone signed up with the owner's address and a password they know; the owner then confirmed it from the mail.
    const squatted = await signUp(api, 'prehijack');
    const subject = person(google, squatted.email);
    const refused = await signInAt(google, 'google', subject);
    expect(refused.query).toMatchObject({ error: 'access_denied', error_code: 'email_exists' });
    expect((await (await db()).entities.identityClaim.get({ provider: 'google', subject }).go()).data).toBeNull();
    const refusal = await rendered(squatted.uuid, 'identity_refused');
    expect(refusal.text).toContain('reset the password');
    // A reset replaces the password and ends every session: then the provider's sign-in links.
    await resetThroughMailbox(api, squatted, 'the owner chose this one');
    expect((await sessionThrough(google, 'google', subject)).user.id).toBe(squatted.uuid);
    // A password changed later (by whoever holds it) stops the next address link again.
    const other = await signUp(api, 'changed');
    await resetThroughMailbox(api, other, 'first from the mailbox');
    const signedIn = await api.call('POST', '/api/auth/signin', { json: { email: other.email, password: 'first from the mailbox' } });
    const changed = await api.call('PUT', '/api/auth/user', {
      token: signedIn.body.data.session.access_token,
      json: { password: 'then changed in session', currentPassword: 'first from the mailbox' },
    });
    expect(changed.status).toBe(200);
    expect((await signInAt(google, 'google', person(google, other.email))).query.error_code).toBe('email_exists');
  });

  it('refuses to link by address an account with a second factor: its owner links from aal2', async () => {
    const owner = await signUp(api, 'with-factor');
    await resetThroughMailbox(api, owner, 'a passphrase from the mailbox');
    const signedIn = await api.call('POST', '/api/auth/signin', {
      json: { email: owner.email, password: 'a passphrase from the mailbox' },
    });
    const token = signedIn.body.data.session.access_token as string;
    const { factorId, secret } = await enrolTotp(api, { token });
    await challengeAndVerify(api, token, factorId, totpCode(secret));
    expect((await signInAt(google, 'google', person(google, owner.email))).query.error_code).toBe('email_exists');
  });

  it('refuses an unconfirmed account holding the address (a pre-registered takeover) and mails its owner', async () => {
    const squatter = await signUp(api, 'squatter', { confirmed: false });
    const subject = person(google, squatter.email);
    const { query } = await signInAt(google, 'google', subject);
    expect(query).toMatchObject({ error: 'access_denied', error_code: 'email_exists' });
    expect(query.code).toBeUndefined();
    const stored = (await (await db()).entities.user.get({ userUuid: squatter.uuid }).go()).data;
    expect(stored?.identities).toBeUndefined();
    const refusal = await rendered(squatter.uuid, 'identity_refused');
    expect(refusal.subject).toBe('A sign-in to your Roster account was refused');
    expect(refusal.text).toContain('the account was never confirmed');
    // The unconfirmed account's name is a stranger's choice: not in the greeting.
    expect(refusal.text).toContain(`Hello ${squatter.email},`);
    expect(refusal.text).not.toContain('Tester');
    const claim = (await (await db()).entities.identityClaim.get({ provider: 'google', subject }).go()).data;
    expect(claim).toBeNull();
  });

  it('refuses an address the provider does not vouch for, making no account', async () => {
    const email = freshAddress('unverified');
    const subject = person(google, email, false);
    const { query } = await signInAt(google, 'google', subject);
    expect(query).toMatchObject({ error: 'access_denied', error_code: 'provider_email_needs_verification' });
    expect((await (await db()).entities.emailClaim.get({ email }).go()).data).toBeNull();
  });

  it('keeps two providers apart: the same subject at another provider is another person', async () => {
    const atGoogle = person(google, freshAddress('first'), true, `shared-${people}`);
    const first = await sessionThrough(google, 'google', atGoogle);
    const atOkta = person(okta, freshAddress('second'), true, atGoogle);
    const second = await sessionThrough(okta, 'okta', atOkta);
    expect(second.user.id).not.toBe(first.user.id);
  });

  it('makes one account when the same new person finishes two sign-ins at once', async () => {
    const email = freshAddress('race');
    const subject = person(google, email);
    const flows = await Promise.all([0, 1, 2].map(() => signInAt(google, 'google', subject)));
    const sessions = await Promise.all(flows.map(({ query, verifier }) => trade(api, query.code as string, verifier)));
    const ids = new Set(sessions.map((res) => res.body.data.session.user.id));
    expect(ids.size).toBe(1);
    const [id] = ids;
    const stored = (await (await db()).entities.user.get({ userUuid: id as string }).go()).data;
    expect(stored?.identities).toHaveLength(1);
  });

  it('sends the browser back with access_denied when the person cancels at the provider', async () => {
    const keys = pkce();
    const res = await callback(api, await google.cancel(await startAt(api, startPath('google', keys.challenge))));
    expect(res.status).toBe(302);
    expect(backAtApp(res.headers.get('location'))).toMatchObject({ error: 'access_denied', error_code: 'access_denied' });
  });
});

describe('provider sign-in: the flow cannot be bent', () => {
  it('uses a flow up once: the same callback again is 410 and opens nothing', async () => {
    const subject = person(google, freshAddress('replay'));
    const keys = pkce();
    const back = await google.signIn(await startAt(api, startPath('google', keys.challenge)), subject);
    expect((await callback(api, back)).status).toBe(302);
    const again = await callback(api, back);
    expect(again.status).toBe(410);
    expect(again.body.error.code).toBe('token_expired');
  });

  it('refuses a state Roster never issued, or none', async () => {
    expect((await api.call('GET', '/auth/v1/callback?code=abc&state=forged')).status).toBe(410);
    expect((await api.call('GET', '/auth/v1/callback?code=abc')).status).toBe(410);
  });

  it("refuses a code issued to another flow (its PKCE verifier and nonce are the other flow's)", async () => {
    const subject = person(google, freshAddress('swap'));
    const mine = await startAt(api, startPath('google', pkce().challenge));
    const theirs = new URL(await google.signIn(await startAt(api, startPath('google', pkce().challenge)), subject));
    const swapped = new URL(CALLBACK);
    swapped.searchParams.set('code', theirs.searchParams.get('code') as string);
    swapped.searchParams.set('state', new URL(mine).searchParams.get('state') as string);
    swapped.searchParams.set('iss', theirs.searchParams.get('iss') as string);
    const res = await callback(api, swapped.toString());
    expect(res.status).toBe(302);
    expect(backAtApp(res.headers.get('location'))).toMatchObject({ error: 'server_error', error_code: 'bad_oauth_callback' });
  });

  it("refuses another provider's answer to a flow (mix-up: the issuer is checked)", async () => {
    const subject = person(okta, freshAddress('mixup'));
    const started = await startAt(api, startPath('google', pkce().challenge));
    const fromOkta = new URL(await okta.signIn(await startAt(api, startPath('okta', pkce().challenge)), subject));
    fromOkta.searchParams.set('state', new URL(started).searchParams.get('state') as string);
    const res = await callback(api, fromOkta.toString());
    expect(backAtApp(res.headers.get('location'))).toMatchObject({ error_code: 'bad_oauth_callback' });
  });

  it('trades a code once, only with the verifier of its challenge (login CSRF: a planted code opens nothing)', async () => {
    const subject = person(google, freshAddress('csrf'));
    // The attacker's own finished sign-in, its code planted in the victim's browser: the victim's app has its own verifier.
    const attacker = await signInAt(google, 'google', subject);
    const victim = pkce();
    const planted = await trade(api, attacker.query.code as string, victim.verifier);
    expect(planted.status).toBe(410);
    expect(planted.body.error.code).toBe('token_expired');
    // Used up by that try: the attacker's own verifier no longer helps either.
    expect((await trade(api, attacker.query.code as string, attacker.verifier)).status).toBe(410);
    const fine = await signInAt(google, 'google', subject);
    expect((await trade(api, fine.query.code as string, fine.verifier)).status).toBe(200);
    expect((await trade(api, fine.query.code as string, fine.verifier)).status).toBe(410);
  });

  it('refuses an expired code', async () => {
    const subject = person(google, freshAddress('late'));
    const { query, verifier } = await signInAt(google, 'google', subject);
    const { hashOpaqueToken } = await import('#lib/auth/opaque-tokens.ts');
    const item = (await (await db()).entities.oauthCode.get({ codeHash: hashOpaqueToken(query.code as string) }).go()).data;
    // expiresAt is read-only: rewrite the item as it would be after its five minutes.
    await (await db()).entities.oauthCode.put({ ...(item as NonNullable<typeof item>), expiresAt: Date.now() - 1 }).go();
    expect((await trade(api, query.code as string, verifier)).status).toBe(410);
  });

  it('sends the browser only to a listed redirect URL (no open redirect)', async () => {
    const { challenge } = pkce();
    for (const redirectTo of [
      'https://evil.example.com/auth/callback',
      'http://localhost:5173.evil.example.com/auth/callback',
      'http://localhost:5173/auth/callback/../../elsewhere',
      'http://localhost:5173/auth/callbackx',
      'http://user@localhost:5173/auth/callback',
      `${APP_URL}#fragment`,
      'javascript:alert(1)',
      'evil://auth/callback',
      'http://localhost:5173\\@evil.example.com/auth/callback',
      '//evil.example.com',
    ]) {
      const res = await api.call('GET', startPath('google', challenge, { redirectTo }));
      expect(res.status, redirectTo).toBe(422);
      expect(res.body.error.fields.redirectTo, redirectTo).toBeDefined();
    }
    // The app's own query is kept, and the code is added to it.
    const subject = person(google, freshAddress('next'));
    const keys = pkce();
    const back = await google.signIn(
      await startAt(api, startPath('google', keys.challenge, { redirectTo: 'https://app.example.com/welcome?next=%2Fteams' })),
      subject,
    );
    const res = await callback(api, back);
    const location = new URL(res.headers.get('location') as string);
    expect(location.origin + location.pathname).toBe('https://app.example.com/welcome');
    expect(location.searchParams.get('next')).toBe('/teams');
    expect(location.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('answers an unknown provider, a missing or plain challenge with the field at fault', async () => {
    const { challenge } = pkce();
    const unknown = await api.call('GET', startPath('nope', challenge));
    expect(unknown.status).toBe(422);
    expect(unknown.body.error.fields.provider).toMatch(/google, okta/);
    const none = await api.call('GET', `/api/auth/oauth/google?redirectTo=${encodeURIComponent(APP_URL)}`);
    expect(none.status).toBe(422);
    const implicit = await api.call('GET', `/auth/v1/authorize?provider=google&redirect_to=${encodeURIComponent(APP_URL)}`);
    expect(implicit.status).toBe(400);
    expect(implicit.body.msg).toMatch(/code_challenge.*PKCE/);
    const plain = await api.call('GET', `${startPath('google', challenge, { gotrue: true })}`.replace('s256', 'plain'));
    expect(plain.status).toBe(400);
    expect((await api.call('GET', `/api/auth/oauth/Google?codeChallenge=${challenge}`)).status).toBe(404);
  });

  it('sends the provider exact, fresh protocol values (PKCE S256, state, nonce, the registered redirect URI)', async () => {
    const { challenge } = pkce();
    const first = new URL(await startAt(api, startPath('google', challenge)));
    const second = new URL(await startAt(api, startPath('google', challenge)));
    expect(first.origin).toBe(google.issuer);
    expect(first.searchParams.get('redirect_uri')).toBe(CALLBACK);
    expect(first.searchParams.get('code_challenge_method')).toBe('S256');
    // Roster's own challenge to the provider, never the app's.
    expect(first.searchParams.get('code_challenge')).not.toBe(challenge);
    for (const name of ['state', 'nonce', 'code_challenge']) expect(first.searchParams.get(name)).not.toBe(second.searchParams.get(name));
    // The state is stored only as a hash.
    const { hashOpaqueToken } = await import('#lib/auth/opaque-tokens.ts');
    const flow = (await (await db()).entities.oauthFlow.get({ stateHash: hashOpaqueToken(first.searchParams.get('state') as string) }).go())
      .data;
    expect(flow).toMatchObject({ provider: 'google', redirectTo: APP_URL, codeChallenge: challenge });
  });
});

describe('identities', () => {
  it('lists, links and unlinks, never the last way in', async () => {
    const email = freshAddress('ways');
    const session = await sessionThrough(google, 'google', person(google, email));
    const token = session.access_token;
    // Another provider's identity, with another address: the owner links it, signed in.
    const oktaSubject = person(okta, freshAddress('work'));
    const { query, verifier } = await throughProvider(api, 'okta', (url) => okta.signIn(url, oktaSubject), {
      linkPath: '/api/auth/identities',
      token,
    });
    const linked = await trade(api, query.code as string, verifier);
    expect(linked.status).toBe(200);
    expect(linked.body.data.session.user.id).toBe(session.user.id);
    const listed = await api.call('GET', '/api/auth/identities', { token });
    expect(listed.body.data.map((i: { provider: string }) => i.provider)).toEqual(['google', 'okta']);
    const [atGoogle, atOkta] = listed.body.data as { identity_id: string }[];
    // Signing in at okta now opens the same account.
    const viaOkta = await sessionThrough(okta, 'okta', oktaSubject);
    expect(viaOkta.user.id).toBe(session.user.id);
    expect((await api.call('DELETE', `/api/auth/identities/${atOkta?.identity_id}`, { token })).status).toBe(200);
    // The unlink ends the account's other sessions (one opened through that identity among them), not the caller's.
    expect((await api.call('GET', '/api/auth/user', { token: viaOkta.access_token })).status).toBe(401);
    expect((await api.call('GET', '/api/auth/user', { token })).status).toBe(200);
    const last = await api.call('DELETE', `/api/auth/identities/${atGoogle?.identity_id}`, { token });
    expect(last.status).toBe(422);
    expect(last.body.error.message).toMatch(/only way to sign in/);
    expect((await api.call('DELETE', `/api/auth/identities/${atOkta?.identity_id}`, { token })).status).toBe(404);
    // Unlinked, the okta identity is free: it makes a new account for its own address.
    expect((await sessionThrough(okta, 'okta', oktaSubject)).user.id).not.toBe(session.user.id);
  });

  it("refuses to link an identity another account holds, and another user's identity id is not found", async () => {
    const holder = await sessionThrough(google, 'google', person(google, freshAddress('holder')));
    const other = await signUp(api, 'other');
    const subject = holder.user.identities[0].id;
    const { query, verifier } = await throughProvider(api, 'google', (url) => google.signIn(url, subject), {
      linkPath: '/api/auth/identities',
      token: other.token,
    });
    const refused = await trade(api, query.code as string, verifier);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('identity_already_exists');
    const theirs = holder.user.identities[0].identity_id;
    expect((await api.call('DELETE', `/api/auth/identities/${theirs}`, { token: other.token })).status).toBe(404);
    expect((await api.call('GET', '/api/auth/identities', { token: other.token })).body.data).toEqual([
      expect.objectContaining({ provider: 'email', email: other.email }),
    ]);
  });

  it('links only for the app that started the link: a link URL finished by someone else links nothing (link CSRF)', async () => {
    const attacker = await signUp(api, 'link-csrf');
    const victim = person(google, freshAddress('victim'));
    // The attacker starts a link and sends its provider URL to the victim, who signs in at the provider.
    const { query } = await throughProvider(api, 'google', (url) => google.signIn(url, victim), {
      linkPath: '/api/auth/identities',
      token: attacker.token,
    });
    // The victim's browser lands on the app with the code; the victim's app holds no verifier of the attacker's.
    expect((await trade(api, query.code as string, pkce().verifier)).status).toBe(410);
    expect((await (await db()).entities.identityClaim.get({ provider: 'google', subject: victim }).go()).data).toBeNull();
    expect(
      (await api.call('GET', '/api/auth/identities', { token: attacker.token })).body.data.map((i: { provider: string }) => i.provider),
    ).toEqual(['email']);
  });

  it('needs a session to list or link', async () => {
    expect((await api.call('GET', '/api/auth/identities')).status).toBe(401);
    expect((await api.call('POST', '/api/auth/identities', { json: { provider: 'google', codeChallenge: pkce().challenge } })).status).toBe(
      401,
    );
  });

  it('answers the callback through callApi only as documented', async () => {
    // The documented shapes hold for a server of another process as well (callApi checks openapi.json).
    expect((await callApi(api.url, 'GET', '/auth/v1/callback?state=x')).status).toBe(410);
  });
});
