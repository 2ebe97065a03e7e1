import { describe, expect, it } from 'vitest';
import { db } from '#lib/db/service.ts';
import { outboxRefOf } from '#lib/mail/outbox-ref.ts';
import { plan } from '#lib/mail/plans.ts';
import { signUp, useApi } from '../helpers/api.ts';
import { claimsOf, mfaUser } from '../helpers/mfa.ts';
import { passkeyChallenge, registerPasskey, signInChallenge, signInWithPasskey, softAuthenticator } from '../helpers/passkeys.ts';

/**
 * Passkeys against DynamoDB Local, with a WebAuthn authenticator made in Node (so a test can make
 * it misbehave). Chromium's own virtual authenticator runs the same flows in browser/passkeys.test.ts.
 */
const api = useApi();

const verifyPasskey = (token: string, factorId: string, challengeId: string, type: 'create' | 'request', credential: unknown) =>
  api.call('POST', `/api/auth/factors/${factorId}/verify`, {
    token,
    json: { challenge_id: challengeId, webauthn: { type, credential_response: credential } },
  });

describe('passkey registration', () => {
  it('enrols a passkey, challenges it with creation options, and verifies the answer: the factor is verified, the session aal2, recovery codes shown', async () => {
    const user = await signUp(api, 'pk-register');
    const authenticator = await softAuthenticator();
    const enrolled = await api.call('POST', '/api/auth/factors', {
      token: user.token,
      json: { factor_type: 'webauthn', friendly_name: 'Laptop' },
    });
    expect(enrolled.status).toBe(201);
    expect(enrolled.body.data).toEqual({ id: expect.any(String), type: 'webauthn', friendly_name: 'Laptop' });
    const factorId = enrolled.body.data.id as string;

    const challenge = await passkeyChallenge(api, user.token, factorId);
    expect(challenge.type).toBe('create');
    expect(challenge.publicKey).toMatchObject({
      rp: { id: 'localhost', name: 'Roster' },
      user: { name: user.email },
      attestation: 'none',
      authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
    });
    const credential = authenticator.create(challenge.publicKey);
    const verified = await verifyPasskey(user.token, factorId, challenge.challengeId, 'create', credential);
    expect(verified.status).toBe(200);
    expect(verified.body.data.recovery_codes).toHaveLength(10);
    const claims = claimsOf(verified.body.data.session.access_token);
    expect(claims.aal).toBe('aal2');
    expect(claims.amr.map((a) => a.method)).toEqual(['mfa/webauthn', 'password']);

    const listed = await api.call('GET', '/api/auth/factors', { token: verified.body.data.session.access_token });
    expect(listed.body.data).toEqual([
      expect.objectContaining({ id: factorId, factor_type: 'webauthn', status: 'verified', friendly_name: 'Laptop' }),
    ]);
    // The credential is stored beside the factor, and its owner can be found from its id.
    const stored = (await db().entities.passkeyCredential.get({ credentialId: credential.id }).go()).data;
    expect(stored).toMatchObject({ userUuid: user.uuid, factorId });
    // Whoever has the password alone can add the first factor: the owner is mailed, naming the factors.
    const notices = (
      await db()
        .entities.outboxMessage.scan.where((a, op) => op.eq(a.userUuid, user.uuid))
        .go()
    ).data;
    const added = notices.filter((n) => n.kind === 'factor_added');
    expect(added).toHaveLength(1);
    const ref = outboxRefOf(added[0] ?? {});
    if (!ref) throw new Error('no outbox message to plan');
    const mail = await plan(db(), ref, new Date());
    if ('notSent' in mail) throw new Error(mail.notSent);
    const rendered = mail.render('unused', 'unused');
    expect(rendered.subject).toBe('A second factor was added to your Roster account');
    expect(rendered.text).toContain('Its factors are now: Laptop (passkey).');
  });

  it('a second passkey needs aal2 once a factor is verified, and its options exclude the passkeys registered already', async () => {
    const user = await signUp(api, 'pk-second');
    const authenticator = await softAuthenticator();
    const first = await registerPasskey(api, user.token, authenticator);
    const aal1 = (await api.call('POST', '/api/auth/signin', { json: { email: user.email, password: user.password } })).body.data.session
      .access_token;
    const refused = await api.call('POST', '/api/auth/factors', { token: aal1, json: { factor_type: 'webauthn' } });
    expect([refused.status, refused.body.error?.code]).toEqual([403, 'mfa_required']);

    const aal2 = first.verified.body.data.session.access_token as string;
    const enrolled = await api.call('POST', '/api/auth/factors', { token: aal2, json: { factor_type: 'webauthn', friendly_name: 'Key' } });
    const challenge = await passkeyChallenge(api, aal2, enrolled.body.data.id);
    expect(challenge.publicKey.excludeCredentials).toEqual([expect.objectContaining({ id: first.credentialId, type: 'public-key' })]);
  });

  it('refuses an answer from another origin, to another challenge, or of the wrong ceremony, and registers nothing', async () => {
    const user = await signUp(api, 'pk-refuse');
    const authenticator = await softAuthenticator();
    const enrolled = await api.call('POST', '/api/auth/factors', { token: user.token, json: { factor_type: 'webauthn' } });
    const factorId = enrolled.body.data.id as string;
    const challenge = await passkeyChallenge(api, user.token, factorId);

    const elsewhere = authenticator.create(challenge.publicKey, { origin: 'https://evil.example' });
    const wrongOrigin = await verifyPasskey(user.token, factorId, challenge.challengeId, 'create', elsewhere);
    expect([wrongOrigin.status, wrongOrigin.body.error.code]).toEqual([422, 'mfa_verification_failed']);
    expect(wrongOrigin.body.error.message).toMatch(/origin/i);

    const other = await passkeyChallenge(api, user.token, factorId);
    const forOther = authenticator.create(other.publicKey);
    const wrongChallenge = await verifyPasskey(user.token, factorId, challenge.challengeId, 'create', forOther);
    expect([wrongChallenge.status, wrongChallenge.body.error.code]).toEqual([422, 'mfa_verification_failed']);

    const asAssertion = await verifyPasskey(user.token, factorId, challenge.challengeId, 'request', {
      ...forOther,
      response: { clientDataJSON: forOther.response.clientDataJSON, authenticatorData: 'AAAA', signature: 'AAAA' },
    });
    expect([asAssertion.status, asAssertion.body.error.code]).toEqual([422, 'validation_failed']);
    expect(asAssertion.body.error.fields.webauthn).toMatch(/create/);

    const listed = await api.call('GET', '/api/auth/factors', { token: user.token });
    expect(listed.body.data).toEqual([expect.objectContaining({ id: factorId, status: 'unverified' })]);
  });

  it('refuses a relying party or origins other than the deployment’s (auth-js sends them from the page)', async () => {
    const user = await signUp(api, 'pk-rp');
    const enrolled = await api.call('POST', '/api/auth/factors', { token: user.token, json: { factor_type: 'webauthn' } });
    const path = `/api/auth/factors/${enrolled.body.data.id}/challenge`;
    const wrongRp = await api.call('POST', path, { token: user.token, json: { webauthn: { rpId: 'evil.example' } } });
    expect([wrongRp.status, wrongRp.body.error.code]).toEqual([422, 'validation_failed']);
    expect(wrongRp.body.error.fields['webauthn.rpId']).toMatch(/localhost/);
    const wrongOrigin = await api.call('POST', path, {
      token: user.token,
      json: { webauthn: { rpId: 'localhost', rpOrigins: ['https://evil.example'] } },
    });
    expect(wrongOrigin.body.error.fields['webauthn.rpOrigins']).toMatch(/evil\.example/);
    const named = await api.call('POST', path, {
      token: user.token,
      json: { webauthn: { rpId: 'localhost', rpOrigins: ['http://localhost:3000'] } },
    });
    expect(named.status).toBe(201);
  });
});

describe('a passkey as the second factor', () => {
  it('a password session steps up with the passkey: request options name it, the counter moves, and a replayed answer is refused', async () => {
    const user = await signUp(api, 'pk-stepup');
    const authenticator = await softAuthenticator();
    const { factorId, credentialId } = await registerPasskey(api, user.token, authenticator);
    const aal1 = (await api.call('POST', '/api/auth/signin', { json: { email: user.email, password: user.password } })).body.data.session
      .access_token;

    const challenge = await passkeyChallenge(api, aal1, factorId);
    expect(challenge.type).toBe('request');
    expect(challenge.publicKey).toMatchObject({ rpId: 'localhost', allowCredentials: [expect.objectContaining({ id: credentialId })] });
    const answer = authenticator.get(challenge.publicKey);
    const stepped = await verifyPasskey(aal1, factorId, challenge.challengeId, 'request', answer);
    expect(stepped.status).toBe(200);
    expect(stepped.body.data.recovery_codes).toBeUndefined();
    expect(claimsOf(stepped.body.data.session.access_token).amr.map((a) => a.method)).toEqual(['mfa/webauthn', 'password']);
    expect((await db().entities.factor.get({ userUuid: user.uuid, factorId }).go()).data?.counter).toBe(1);

    // The same answer again, to a fresh challenge of its own: the signature is over the old challenge.
    const again = await passkeyChallenge(api, aal1, factorId);
    const replayed = await verifyPasskey(aal1, factorId, again.challengeId, 'request', answer);
    expect([replayed.status, replayed.body.error.code]).toEqual([422, 'mfa_verification_failed']);
    // The same challenge again: used up.
    const reused = await verifyPasskey(aal1, factorId, challenge.challengeId, 'request', authenticator.get(challenge.publicKey));
    expect([reused.status, reused.body.error.code]).toEqual([410, 'mfa_challenge_expired']);
  });

  it('refuses a counter that did not go up (a cloned authenticator), as the WebAuthn spec asks', async () => {
    const user = await signUp(api, 'pk-clone');
    const authenticator = await softAuthenticator();
    const { factorId } = await registerPasskey(api, user.token, authenticator);
    const first = await passkeyChallenge(api, user.token, factorId);
    expect(
      (await verifyPasskey(user.token, factorId, first.challengeId, 'request', authenticator.get(first.publicKey, { counter: 5 }))).status,
    ).toBe(200);
    const second = await passkeyChallenge(api, user.token, factorId);
    const cloned = await verifyPasskey(
      user.token,
      factorId,
      second.challengeId,
      'request',
      authenticator.get(second.publicKey, { counter: 5 }),
    );
    expect([cloned.status, cloned.body.error.code]).toEqual([422, 'mfa_verification_failed']);
    expect(cloned.body.error.message).toMatch(/counter/i);
  });

  it('two verifies of one answer at once: one session steps up, the other is refused', async () => {
    const user = await signUp(api, 'pk-race');
    const authenticator = await softAuthenticator();
    const { factorId } = await registerPasskey(api, user.token, authenticator);
    const challenge = await passkeyChallenge(api, user.token, factorId);
    const answer = authenticator.get(challenge.publicKey);
    const replies = await Promise.all([0, 1, 2].map(() => verifyPasskey(user.token, factorId, challenge.challengeId, 'request', answer)));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of replies.filter((x) => x.status !== 200))
      expect(['mfa_challenge_expired', 'mfa_verification_failed']).toContain(r.body.error.code);
  });

  it("another account's passkey cannot answer for this account's factor", async () => {
    const victim = await signUp(api, 'pk-victim');
    const thief = await signUp(api, 'pk-thief');
    const victimKey = await softAuthenticator();
    const thiefKey = await softAuthenticator();
    const { factorId } = await registerPasskey(api, victim.token, victimKey);
    await registerPasskey(api, thief.token, thiefKey);
    const challenge = await passkeyChallenge(api, victim.token, factorId);
    const forged = await verifyPasskey(
      victim.token,
      factorId,
      challenge.challengeId,
      'request',
      thiefKey.get(challenge.publicKey, { id: [...thiefKey.held.keys()][0] as string }),
    );
    expect([forged.status, forged.body.error.code]).toEqual([422, 'mfa_verification_failed']);
  });
});

describe('signing in with a passkey alone', () => {
  it('opens an aal2 session (amr: mfa/webauthn, passkey) from a discoverable passkey with user verification, with no e-mail or password', async () => {
    const user = await signUp(api, 'pk-signin');
    const authenticator = await softAuthenticator();
    await registerPasskey(api, user.token, authenticator);
    const { publicKey } = await signInChallenge(api);
    expect(publicKey).toMatchObject({ rpId: 'localhost', userVerification: 'required', allowCredentials: [] });

    const signedIn = await signInWithPasskey(api, authenticator);
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.data.session.user.id).toBe(user.uuid);
    const claims = claimsOf(signedIn.body.data.session.access_token);
    expect(claims.aal).toBe('aal2');
    expect(claims.amr.map((a) => a.method)).toEqual(['mfa/webauthn', 'passkey']);
    // The session works, and refreshes at aal2.
    const me = await api.call('GET', '/api/auth/user', { token: signedIn.body.data.session.access_token });
    expect(me.body.data.id).toBe(user.uuid);
    const refreshed = await api.call('POST', '/api/auth/refresh', { json: { refresh_token: signedIn.body.data.session.refresh_token } });
    expect(claimsOf(refreshed.body.data.session.access_token).aal).toBe('aal2');
  });

  it('refuses an answer without user verification, an unknown passkey, a replayed answer and a used challenge', async () => {
    const user = await signUp(api, 'pk-signin-refuse');
    const authenticator = await softAuthenticator();
    await registerPasskey(api, user.token, authenticator);

    const unverified = await signInWithPasskey(api, authenticator, { uv: false });
    expect([unverified.status, unverified.body.error.code]).toEqual([401, 'invalid_credentials']);
    // The same answer for every refusal: nothing about the account, the counter or why.
    expect(unverified.body.error.message).toMatch(/does not sign in here/);

    const stranger = await softAuthenticator();
    stranger.create({ challenge: 'AAAA', user: { id: 'AAAA' } });
    const unknown = await signInWithPasskey(api, stranger);
    expect([unknown.status, unknown.body.error.code]).toEqual([401, 'invalid_credentials']);

    const { challengeId, publicKey } = await signInChallenge(api);
    const answer = authenticator.get(publicKey);
    const send = () =>
      api.call('POST', '/api/auth/passkeys/sign-in', {
        json: { challenge_id: challengeId, webauthn: { type: 'request', credential_response: answer } },
      });
    expect((await send()).status).toBe(200);
    const replayed = await send();
    expect([replayed.status, replayed.body.error.code]).toEqual([410, 'mfa_challenge_expired']);
  });

  it('a userHandle naming another account is refused', async () => {
    const user = await signUp(api, 'pk-handle');
    const authenticator = await softAuthenticator();
    await registerPasskey(api, user.token, authenticator);
    const { challengeId, publicKey } = await signInChallenge(api);
    const answer = authenticator.get(publicKey);
    const lying = {
      ...answer,
      response: { ...answer.response, userHandle: Buffer.from('00000000-0000-4000-8000-000000000000').toString('base64url') },
    };
    const refused = await api.call('POST', '/api/auth/passkeys/sign-in', {
      json: { challenge_id: challengeId, webauthn: { type: 'request', credential_response: lying } },
    });
    expect([refused.status, refused.body.error.code]).toEqual([401, 'invalid_credentials']);
  });

  it('removing the passkey (from aal2) stops it signing in, and deleting the account takes its credential item too', async () => {
    const user = await signUp(api, 'pk-remove');
    const authenticator = await softAuthenticator();
    const { factorId, credentialId, verified } = await registerPasskey(api, user.token, authenticator);
    const aal2 = verified.body.data.session.access_token as string;
    const removed = await api.call('DELETE', `/api/auth/factors/${factorId}`, { token: aal2 });
    expect(removed.status).toBe(200);
    expect((await db().entities.passkeyCredential.get({ credentialId }).go()).data).toBeNull();
    const after = await signInWithPasskey(api, authenticator);
    expect([after.status, after.body.error.code]).toEqual([401, 'invalid_credentials']);

    const other = await signUp(api, 'pk-delete');
    const key = await softAuthenticator();
    const registered = await registerPasskey(api, other.token, key);
    const token = registered.verified.body.data.session.access_token as string;
    const deleted = await api.call('DELETE', '/api/auth/user', { token, json: { currentPassword: other.password } });
    expect(deleted.status).toBe(200);
    expect((await db().entities.passkeyCredential.get({ credentialId: registered.credentialId }).go()).data).toBeNull();
    expect((await signInWithPasskey(api, key)).status).toBe(401);
  });

  it('a passkey sign-in satisfies a team that requires MFA, and a TOTP account can add a passkey from aal2', async () => {
    const user = await signUp(api, 'pk-team');
    const mfa = await mfaUser(api, user);
    const authenticator = await softAuthenticator();
    await registerPasskey(api, mfa.token, authenticator);
    const slug = `pk-team-${Date.now().toString(36)}`;
    await api.call('POST', '/api/teams', { token: mfa.token, json: { name: 'Passkey team', slug } });
    const set = await api.call('PUT', `/api/teams/${slug}`, { token: mfa.token, json: { name: 'Passkey team', slug, requireMfa: true } });
    expect(set.status).toBe(200);
    const signedIn = await signInWithPasskey(api, authenticator);
    const read = await api.call('GET', `/api/teams/${slug}`, { token: signedIn.body.data.session.access_token });
    expect(read.status).toBe(200);
    // Adding the passkey ended the other sessions; a new password session is aal1.
    const aal1 = (await api.call('POST', '/api/auth/signin', { json: { email: user.email, password: user.password } })).body.data.session
      .access_token;
    expect((await api.call('GET', `/api/teams/${slug}`, { token: aal1 })).status).toBe(403);
  });
});
