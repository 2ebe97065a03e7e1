import { describe, expect, it } from 'vitest';
import { config } from '#lib/core/config.ts';
import { db } from '#lib/db/service.ts';
import { type TestUser, createTeam, signUp, useApi } from '../helpers/api.ts';
import { challengeAndVerify, claimsOf, currentStep, enrolTotp, mfaUser, totpCode } from '../helpers/mfa.ts';

const api = useApi();

const me = (token: string) => api.call('GET', '/api/auth/user', { token });

/** A six-digit code that none of the steps around now accepts. */
const wrongCodeFor = (secret: string): string => {
  const step = currentStep();
  const valid = new Set([-2, -1, 0, 1, 2].map((d) => totpCode(secret, step + d)));
  return ['000000', '111111', '222222', '333333'].find((c) => !valid.has(c)) as string;
};

const signIn = async (user: TestUser) =>
  (await api.call('POST', '/api/auth/signin', { json: { email: user.email, password: user.password } })).body.data.session;

describe('TOTP enrolment', () => {
  it('answers the key once (base32, otpauth URI, SVG QR code), lists the factor unverified, and stores the key sealed', async () => {
    const user = await signUp(api, 'enrol');
    const { factorId, secret, body } = await enrolTotp(api, user, 'My phone');
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(body.type).toBe('totp');
    expect(body.friendly_name).toBe('My phone');
    const uri = new URL(body.totp.uri);
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.searchParams.get('secret')).toBe(secret);
    expect(uri.searchParams.get('issuer')).toBe(new URL(config.publicUrl).hostname);
    expect(decodeURIComponent(uri.pathname)).toContain(user.email);
    expect(body.totp.qr_code).toMatch(/^<svg[\s\S]*<\/svg>$/);

    const listed = await api.call('GET', '/api/auth/factors', { token: user.token });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([
      expect.objectContaining({ id: factorId, friendly_name: 'My phone', factor_type: 'totp', status: 'unverified' }),
    ]);
    expect((await me(user.token)).body.data.factors).toEqual(listed.body.data);

    const stored = (await db().entities.factor.get({ userUuid: user.uuid, factorId }).go()).data;
    expect(stored?.sealedSecret).toMatch(/^v1\./);
    expect(JSON.stringify(stored)).not.toContain(secret);
  });

  it('takes enrolments racing on one account: each is listed once, and the 10-factor cap holds', async () => {
    const user = await signUp(api, 'racer');
    const enrolAtOnce = (n: number) =>
      Promise.all(
        Array.from({ length: n }, () => api.call('POST', '/api/auth/factors', { token: user.token, json: { factor_type: 'totp' } })),
      );
    // A loser of the list's condition reads the list again and tries anew: three at once all pass.
    for (let round = 0; round < 2; round++) expect((await enrolAtOnce(3)).map((r) => r.status)).toEqual([201, 201, 201]);
    expect((await enrolAtOnce(2)).map((r) => r.status)).toEqual([201, 201]);
    // Two places left, four asking: the cap is checked against the list each attempt reads.
    expect((await enrolAtOnce(4)).map((r) => r.status).sort()).toEqual([201, 201, 422, 422]);
    const listed = (await api.call('GET', '/api/auth/factors', { token: user.token })).body.data;
    expect(listed).toHaveLength(10);
    expect(new Set(listed.map((f: { id: string }) => f.id)).size).toBe(10);
  });

  it('refuses a type other than totp, and an 11th factor', async () => {
    const user = await signUp(api, 'many');
    const bad = await api.call('POST', '/api/auth/factors', { token: user.token, json: { factor_type: 'phone' } });
    expect(bad.status).toBe(422);
    for (let i = 0; i < 10; i++) await enrolTotp(api, user, `App ${i}`);
    const eleventh = await api.call('POST', '/api/auth/factors', { token: user.token, json: { factor_type: 'totp' } });
    expect(eleventh.status).toBe(422);
    expect(eleventh.body.error.code).toBe('too_many_factors');
  });

  it('renames a factor, and another user cannot see or touch it', async () => {
    const user = await signUp(api, 'rename');
    const other = await signUp(api, 'other');
    const { factorId } = await enrolTotp(api, user);
    const renamed = await api.call('PUT', `/api/auth/factors/${factorId}`, { token: user.token, json: { friendly_name: 'Work phone' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data.friendly_name).toBe('Work phone');
    for (const [method, path] of [
      ['PUT', `/api/auth/factors/${factorId}`],
      ['DELETE', `/api/auth/factors/${factorId}`],
      ['POST', `/api/auth/factors/${factorId}/challenge`],
    ] as const) {
      const res = await api.call(method, path, { token: other.token, ...(method === 'PUT' ? { json: { friendly_name: 'Mine' } } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
  });
});

describe('step-up to aal2', () => {
  it('verifies the first code: the session becomes aal2 (amr: totp then password), ten recovery codes, other sessions end', async () => {
    const user = await signUp(api, 'activate');
    const other = await signIn(user);
    const { factorId, secret } = await enrolTotp(api, user);
    const res = await challengeAndVerify(api, user.token, factorId, totpCode(secret));
    expect(res.status).toBe(200);
    const { session, recovery_codes: codes } = res.body.data;
    const claims = claimsOf(session.access_token);
    expect(claims.aal).toBe('aal2');
    expect(claims.amr.map((a) => a.method)).toEqual(['totp', 'password']);
    expect(claims.session_id).toBe(claimsOf(user.token).session_id);
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    expect(session.user.factors[0].status).toBe('verified');
    // The session that proved nothing new is over; the refreshed pair keeps aal2.
    expect((await me(other.access_token)).status).toBe(401);
    const refreshed = await api.call('POST', '/api/auth/refresh', { json: { refresh_token: session.refresh_token } });
    expect(claimsOf(refreshed.body.data.session.access_token).aal).toBe('aal2');
    // A new sign-in is aal1 and shows the verified factor: the client knows a second step is due.
    const next = await signIn(user);
    expect(claimsOf(next.access_token).aal).toBe('aal1');
    expect(next.user.factors).toEqual([expect.objectContaining({ id: factorId, status: 'verified' })]);
  });

  it('never raises a session by a password reset: the reset link opens an aal1 session', async () => {
    const user = await signUp(api, 'reset');
    await mfaUser(api, user);
    const { issueToken } = await import('#lib/auth/account-tokens.ts');
    const u = (await db().entities.user.get({ userUuid: user.uuid }).go()).data;
    const token = await issueToken(db(), { purpose: 'recovery', email: user.email, user: u as NonNullable<typeof u> }, new Date());
    const reset = await api.call('POST', '/api/auth/reset', { json: { token, password: 'another correct horse battery' } });
    expect(reset.status).toBe(200);
    const claims = claimsOf(reset.body.data.session.access_token);
    expect(claims.aal).toBe('aal1');
    expect(claims.amr).toHaveLength(1);
    expect(reset.body.data.session.user.factors[0].status).toBe('verified');
  });

  it('takes a code once: the same code, or an older one, is refused after it was used', async () => {
    const user = await signUp(api, 'replay');
    const m = await mfaUser(api, user);
    const again = await challengeAndVerify(api, m.aal1Token, m.factorId, totpCode(m.secret, m.lastStep));
    expect(again.status).toBe(422);
    expect(again.body.error.code).toBe('mfa_verification_failed');
    const older = await challengeAndVerify(api, m.aal1Token, m.factorId, totpCode(m.secret, m.lastStep - 1));
    expect(older.status).toBe(422);
    const next = await challengeAndVerify(api, m.aal1Token, m.factorId, totpCode(m.secret, m.lastStep + 1));
    expect(next.status).toBe(200);
    expect(next.body.data.recovery_codes).toBeUndefined();
    expect(claimsOf(next.body.data.session.access_token).aal).toBe('aal2');
  });

  it('refuses a challenge that expired, was used, or belongs to another session', async () => {
    const user = await signUp(api, 'challenge');
    const { factorId, secret } = await enrolTotp(api, user);
    const second = await signIn(user);
    const theirs = await api.call('POST', `/api/auth/factors/${factorId}/challenge`, { token: second.access_token });
    const verify = (token: string, challengeId: string, code = totpCode(secret)) =>
      api.call('POST', `/api/auth/factors/${factorId}/verify`, { token, json: { challenge_id: challengeId, code } });
    expect((await verify(user.token, theirs.body.data.id)).status).toBe(410);

    const mine = await api.call('POST', `/api/auth/factors/${factorId}/challenge`, { token: user.token });
    expect(mine.body.data.expires_at - Math.floor(Date.now() / 1000)).toBeGreaterThan(290);
    const stored = (await db().entities.mfaChallenge.get({ challengeId: mine.body.data.id }).go()).data;
    await db()
      .entities.mfaChallenge.put({ ...(stored as NonNullable<typeof stored>), expiresAt: Math.floor(Date.now() / 1000) - 1 })
      .go();
    const expired = await verify(user.token, mine.body.data.id);
    expect(expired.status).toBe(410);
    expect(expired.body.error.code).toBe('mfa_challenge_expired');

    const fresh = await api.call('POST', `/api/auth/factors/${factorId}/challenge`, { token: user.token });
    expect((await verify(user.token, fresh.body.data.id)).status).toBe(200);
    expect((await verify(user.token, fresh.body.data.id, totpCode(secret, currentStep() + 1))).status).toBe(410);
  });

  it('limits wrong codes: 5 on a factor, then 429 with Retry-After even for the right code', async () => {
    const user = await signUp(api, 'guesser');
    const { factorId, secret } = await enrolTotp(api, user);
    const wrong = wrongCodeFor(secret);
    for (let i = 0; i < 5; i++) expect((await challengeAndVerify(api, user.token, factorId, wrong)).status).toBe(422);
    const limited = await challengeAndVerify(api, user.token, factorId, totpCode(secret));
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('gives two verifies of one code at once one aal2 session and one refusal', async () => {
    const user = await signUp(api, 'race');
    const { factorId, secret } = await enrolTotp(api, user);
    const code = totpCode(secret);
    const challenges = await Promise.all(
      [0, 1].map(() => api.call('POST', `/api/auth/factors/${factorId}/challenge`, { token: user.token })),
    );
    const results = await Promise.all(
      challenges.map((c) =>
        api.call('POST', `/api/auth/factors/${factorId}/verify`, { token: user.token, json: { challenge_id: c.body.data.id, code } }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 422]);
    expect(results.filter((r) => r.status === 200)[0]?.body.data.recovery_codes).toHaveLength(10);
  });

  it('never answers 5xx when the factor is removed while it is being verified, and leaves no half of either', async () => {
    for (let round = 0; round < 4; round++) {
      const user = await signUp(api, 'remove-race');
      const { factorId, secret } = await enrolTotp(api, user);
      const challenge = await api.call('POST', `/api/auth/factors/${factorId}/challenge`, { token: user.token });
      const [verified, removed] = await Promise.all([
        api.call('POST', `/api/auth/factors/${factorId}/verify`, {
          token: user.token,
          json: { challenge_id: challenge.body.data.id, code: totpCode(secret) },
        }),
        api.call('DELETE', `/api/auth/factors/${factorId}`, { token: user.token }),
      ]);
      expect([200, 404, 409, 422]).toContain(verified.status);
      expect([200, 403, 404, 409]).toContain(removed.status);
      const item = (await db().entities.factor.get({ userUuid: user.uuid, factorId }).go()).data;
      const listed = (await me(user.token)).body.data.factors ?? [];
      // The secret and its entry come and go together.
      expect(item === null).toBe(!listed.some((f: { id: string }) => f.id === factorId));
    }
  });
});

describe('a factor set up with the password alone', () => {
  it("is taken away by the owner's first verify, and cannot be activated later from aal1", async () => {
    const owner = await signUp(api, 'owner-first');
    // A thief with the password sets up a factor before the owner turns MFA on...
    const thief = await signIn(owner);
    const planted = await enrolTotp(api, { token: thief.access_token }, 'Planted');
    const m = await mfaUser(api, owner);
    // ...the owner's first verify took it away, secret and all.
    expect((await me(m.token)).body.data.factors.map((f: { id: string }) => f.id)).toEqual([m.factorId]);
    expect((await db().entities.factor.get({ userUuid: owner.uuid, factorId: planted.factorId }).go()).data).toBeNull();
    // A factor left unverified after the first is verified needs aal2 to become one.
    const spare = await enrolTotp(api, { token: m.token }, 'Spare');
    const fromAal1 = await challengeAndVerify(api, m.aal1Token, spare.factorId, totpCode(spare.secret));
    expect([fromAal1.status, fromAal1.body.error?.code]).toEqual([403, 'mfa_required']);
    const fromAal2 = await challengeAndVerify(api, m.token, spare.factorId, totpCode(spare.secret));
    expect(fromAal2.status).toBe(200);
    expect(fromAal2.body.data.recovery_codes).toBeUndefined();
  });
});

describe('refresh tokens across a step-up', () => {
  it("retires the aal1 session's refresh tokens: only the step-up's refreshes, and keeps aal2", async () => {
    const user = await signUp(api, 'refresher');
    const { factorId, secret } = await enrolTotp(api, user);
    const stepped = await challengeAndVerify(api, user.token, factorId, totpCode(secret));
    expect(stepped.status).toBe(200);
    const old = await api.call('POST', '/api/auth/refresh', { json: { refresh_token: user.refreshToken } });
    expect(old.status).toBe(401);
    const fresh = await api.call('POST', '/api/auth/refresh', { json: { refresh_token: stepped.body.data.session.refresh_token } });
    expect(fresh.status).toBe(200);
    expect(claimsOf(fresh.body.data.session.access_token).aal).toBe('aal2');
    // Its successor keeps aal2 too, and the session was not ended by the refused old token.
    const again = await api.call('POST', '/api/auth/refresh', { json: { refresh_token: fresh.body.data.session.refresh_token } });
    expect(claimsOf(again.body.data.session.access_token).aal).toBe('aal2');
  });
});

describe('removing a factor', () => {
  it('takes the session back to aal1 with the last verified factor: a team that requires MFA refuses it again', async () => {
    const owner = await signUp(api, 'downgrade');
    const m = await mfaUser(api, owner);
    const team = await createTeam(api, { ...owner, token: m.token });
    await api.call('PUT', `/api/teams/${team.slug}`, { token: m.token, json: { name: 'Strict', slug: team.slug, requireMfa: true } });
    expect((await api.call('GET', `/api/teams/${team.slug}`, { token: m.token })).status).toBe(200);
    expect((await api.call('DELETE', `/api/auth/factors/${m.factorId}`, { token: m.token })).status).toBe(200);
    const refused = await api.call('GET', `/api/teams/${team.slug}`, { token: m.token });
    expect([refused.status, refused.body.error?.code]).toEqual([403, 'mfa_required']);
    const refreshed = await api.call('POST', '/api/auth/refresh', { json: { refresh_token: m.refreshToken } });
    expect(claimsOf(refreshed.body.data.session.access_token).aal).toBe('aal1');
  });

  it('needs aal2 for a verified factor; then ends the other sessions and, with the last one, the recovery codes', async () => {
    const user = await signUp(api, 'remove');
    const m = await mfaUser(api, user);
    const refused = await api.call('DELETE', `/api/auth/factors/${m.factorId}`, { token: m.aal1Token });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('mfa_required');
    const removed = await api.call('DELETE', `/api/auth/factors/${m.factorId}`, { token: m.token });
    expect(removed.status).toBe(200);
    expect(removed.body.data).toEqual({ id: m.factorId });
    expect((await me(m.aal1Token)).status).toBe(401);
    expect((await me(m.token)).body.data.factors).toBeUndefined();
    expect((await db().entities.recoveryCodes.get({ userUuid: user.uuid }).go()).data).toBeNull();
  });

  it('lets an unverified factor go from an aal1 session', async () => {
    const user = await signUp(api, 'abandon');
    const { factorId } = await enrolTotp(api, user);
    expect((await api.call('DELETE', `/api/auth/factors/${factorId}`, { token: user.token })).status).toBe(200);
    expect((await db().entities.factor.get({ userUuid: user.uuid, factorId }).go()).data).toBeNull();
  });

  it('needs aal2 to add a factor once one is verified', async () => {
    const user = await signUp(api, 'second');
    const m = await mfaUser(api, user);
    const refused = await api.call('POST', '/api/auth/factors', { token: m.aal1Token, json: { factor_type: 'totp' } });
    expect(refused.status).toBe(403);
    expect((await enrolTotp(api, { token: m.token }, 'Backup')).factorId).toBeTruthy();
  });
});

describe('an account with a verified factor', () => {
  it('changes its password or address, and is deleted, only from an aal2 session', async () => {
    const user = await signUp(api, 'guarded');
    const m = await mfaUser(api, user);
    const attempts = [
      ['PUT', '/api/auth/user', { password: 'a brand new passphrase', currentPassword: user.password }],
      ['PUT', '/api/auth/user', { email: `moved-${user.email}`, currentPassword: user.password }],
      ['DELETE', '/api/auth/user', { currentPassword: user.password }],
    ] as const;
    for (const [method, path, json] of attempts) {
      const res = await api.call(method, path, { token: m.aal1Token, json });
      expect([res.status, res.body.error?.code]).toEqual([403, 'mfa_required']);
    }
    const gotrue = await api.call('PUT', '/auth/v1/user', {
      token: m.aal1Token,
      json: { password: 'a brand new passphrase', current_password: user.password },
    });
    expect([gotrue.status, gotrue.body.error_code]).toEqual([403, 'insufficient_aal']);
    // Names stay free to change; from aal2 the password too.
    expect((await api.call('PUT', '/api/auth/user', { token: m.aal1Token, json: { firstName: 'Still me' } })).status).toBe(200);
    const changed = await api.call('PUT', '/api/auth/user', {
      token: m.token,
      json: { password: 'a brand new passphrase', currentPassword: user.password },
    });
    expect(changed.status).toBe(200);
  });
});

describe('regenerating recovery codes while the last factor goes', () => {
  it('never leaves codes behind an account without a verified factor', async () => {
    for (let round = 0; round < 4; round++) {
      const user = await signUp(api, 'codes-race');
      const m = await mfaUser(api, user);
      const [regenerated, removed] = await Promise.all([
        api.call('POST', '/api/auth/recovery-codes', { token: m.token }),
        api.call('DELETE', `/api/auth/factors/${m.factorId}`, { token: m.token }),
      ]);
      expect([201, 403, 409]).toContain(regenerated.status);
      expect(removed.status).toBe(200);
      expect((await db().entities.recoveryCodes.get({ userUuid: user.uuid }).go()).data).toBeNull();
    }
  });
});

describe('deleting an account', () => {
  it("takes its factors' sealed keys and its recovery codes with it", async () => {
    const user = await signUp(api, 'leaver');
    const m = await mfaUser(api, user);
    const { factorId: spare } = await enrolTotp(api, { token: m.token }, 'Spare');
    const res = await api.call('DELETE', '/api/auth/user', { token: m.token, json: { currentPassword: user.password } });
    expect(res.status).toBe(200);
    for (const factorId of [m.factorId, spare])
      expect((await db().entities.factor.get({ userUuid: user.uuid, factorId }).go()).data).toBeNull();
    expect((await db().entities.recoveryCodes.get({ userUuid: user.uuid }).go()).data).toBeNull();
  });
});

describe('recovery codes', () => {
  it('raise a session to aal2 once each, are mailed about, and are regenerated only from aal2', async () => {
    const user = await signUp(api, 'codes');
    const m = await mfaUser(api, user);
    const [code] = m.recoveryCodes;
    const used = await api.call('POST', '/api/auth/recovery-codes/verify', { token: m.aal1Token, json: { code: code?.toUpperCase() } });
    expect(used.status).toBe(200);
    const claims = claimsOf(used.body.data.session.access_token);
    expect(claims.aal).toBe('aal2');
    expect(claims.amr[0]?.method).toBe('recovery_code');
    const again = await api.call('POST', '/api/auth/recovery-codes/verify', { token: m.aal1Token, json: { code } });
    expect(again.status).toBe(422);
    const notices = await db()
      .entities.outboxMessage.scan.where((a, op) => op.eq(a.userUuid, user.uuid))
      .go();
    expect(notices.data.filter((n) => n.kind === 'recovery_code_used')).toHaveLength(1);

    expect((await api.call('POST', '/api/auth/recovery-codes', { token: m.aal1Token })).status).toBe(403);
    const fresh = await api.call('POST', '/api/auth/recovery-codes', { token: m.token });
    expect(fresh.status).toBe(201);
    expect(fresh.body.data.recovery_codes).toHaveLength(10);
    // The old ones stopped working.
    const old = await api.call('POST', '/api/auth/recovery-codes/verify', { token: m.aal1Token, json: { code: m.recoveryCodes[1] } });
    expect(old.status).toBe(422);
  });

  it('counts wrong codes against the account', async () => {
    const user = await signUp(api, 'code-guess');
    const m = await mfaUser(api, user);
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++)
      statuses.push(
        (await api.call('POST', '/api/auth/recovery-codes/verify', { token: m.aal1Token, json: { code: `wrong-${i}` } })).status,
      );
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(422));
    expect(statuses[10]).toBe(429);
  });
});
