/**
 * @supabase/auth-js's `mfa.*` methods, unchanged, against the Supabase-compatible API (docs/mfa.md):
 * what an app following Supabase's MFA guide calls, each step asserting what auth-js returns.
 */
import { describe, expect, it } from 'vitest';
import { freshEmail, useApi } from '../helpers/api.ts';
import { authClient } from '../helpers/auth-js.ts';
import { currentStep, totpCode } from '../helpers/mfa.ts';

const api = useApi();
const PASSWORD = 'correct horse battery staple';

const signedUp = async () => {
  const email = freshEmail('mfa');
  const c = authClient(api);
  const { error } = await c.auth.signUp({ email, password: PASSWORD });
  expect(error).toBeNull();
  return { ...c, email };
};

describe('@supabase/auth-js mfa against /auth/v1', () => {
  it('enroll, challengeAndVerify, getAuthenticatorAssuranceLevel, listFactors: aal1 to aal2', async () => {
    const { auth, events } = await signedUp();
    const enrolled = await auth.mfa.enroll({ factorType: 'totp', friendlyName: 'Phone' });
    expect(enrolled.error).toBeNull();
    const factor = enrolled.data as {
      id: string;
      type: string;
      friendly_name?: string;
      totp: { qr_code: string; secret: string; uri: string };
    };
    expect(factor.type).toBe('totp');
    expect(factor.friendly_name).toBe('Phone');
    expect(factor.totp.qr_code).toMatch(/^data:image\/svg\+xml;utf-8,<svg/);
    expect(factor.totp.uri).toContain(`secret=${factor.totp.secret}`);

    const before = await auth.mfa.getAuthenticatorAssuranceLevel();
    expect(before.data).toMatchObject({ currentLevel: 'aal1', nextLevel: 'aal1' });

    const verified = await auth.mfa.challengeAndVerify({ factorId: factor.id, code: totpCode(factor.totp.secret) });
    expect(verified.error).toBeNull();
    expect(events).toContain('MFA_CHALLENGE_VERIFIED');

    const after = await auth.mfa.getAuthenticatorAssuranceLevel();
    expect(after.data?.currentLevel).toBe('aal2');
    expect(after.data?.nextLevel).toBe('aal2');
    expect(after.data?.currentAuthenticationMethods.map((m) => (typeof m === 'string' ? m : m.method))).toEqual(['totp', 'password']);
    const listed = await auth.mfa.listFactors();
    expect(listed.error).toBeNull();
    expect(listed.data?.totp.map((f) => [f.id, f.status, f.friendly_name])).toEqual([[factor.id, 'verified', 'Phone']]);
    expect((await auth.getClaims()).data?.claims.aal).toBe('aal2');
  });

  it('a password sign-in is aal1 with aal2 next; challenge and verify step it up; a used code is refused', async () => {
    const first = await signedUp();
    const { data } = await first.auth.mfa.enroll({ factorType: 'totp' });
    const factor = data as { id: string; totp: { secret: string } };
    const step = currentStep();
    expect((await first.auth.mfa.challengeAndVerify({ factorId: factor.id, code: totpCode(factor.totp.secret, step) })).error).toBeNull();

    const second = authClient(api);
    expect((await second.auth.signInWithPassword({ email: first.email, password: PASSWORD })).error).toBeNull();
    expect((await second.auth.mfa.getAuthenticatorAssuranceLevel()).data).toMatchObject({ currentLevel: 'aal1', nextLevel: 'aal2' });

    const replayed = await second.auth.mfa.challengeAndVerify({ factorId: factor.id, code: totpCode(factor.totp.secret, step) });
    expect(replayed.error?.code).toBe('mfa_verification_failed');
    expect(replayed.error?.status).toBe(422);

    const challenge = await second.auth.mfa.challenge({ factorId: factor.id });
    expect(challenge.error).toBeNull();
    const challengeData = challenge.data as { id: string; type: string; expires_at: number };
    expect(challengeData.type).toBe('totp');
    const ok = await second.auth.mfa.verify({
      factorId: factor.id,
      challengeId: challengeData.id,
      code: totpCode(factor.totp.secret, step + 1),
    });
    expect(ok.error).toBeNull();
    expect((await second.auth.mfa.getAuthenticatorAssuranceLevel()).data?.currentLevel).toBe('aal2');
  });

  it('unenroll: insufficient_aal from an aal1 session, then gone from an aal2 one', async () => {
    const first = await signedUp();
    const { data } = await first.auth.mfa.enroll({ factorType: 'totp' });
    const factor = data as { id: string; totp: { secret: string } };
    await first.auth.mfa.challengeAndVerify({ factorId: factor.id, code: totpCode(factor.totp.secret) });

    const second = authClient(api);
    await second.auth.signInWithPassword({ email: first.email, password: PASSWORD });
    const refused = await second.auth.mfa.unenroll({ factorId: factor.id });
    expect(refused.error?.code).toBe('insufficient_aal');
    expect(refused.error?.status).toBe(403);

    const removed = await first.auth.mfa.unenroll({ factorId: factor.id });
    expect(removed.error).toBeNull();
    expect(removed.data).toEqual({ id: factor.id });
    expect((await first.auth.mfa.listFactors()).data?.all).toEqual([]);
    // Removing a factor ended the other session.
    expect((await second.auth.getUser()).error).not.toBeNull();
  });

  it("answers GoTrue's codes: insufficient_aal, too_many_enrolled_mfa_factors, mfa_challenge_expired, over_request_rate_limit", async () => {
    const first = await signedUp();
    const { data } = await first.auth.mfa.enroll({ factorType: 'totp' });
    const factor = data as { id: string; totp: { secret: string } };
    const step = currentStep();
    await first.auth.mfa.challengeAndVerify({ factorId: factor.id, code: totpCode(factor.totp.secret, step) });

    const second = authClient(api);
    await second.auth.signInWithPassword({ email: first.email, password: PASSWORD });
    const refused = await second.auth.mfa.enroll({ factorType: 'totp' });
    expect([refused.error?.status, refused.error?.code]).toEqual([403, 'insufficient_aal']);

    for (let i = 1; i < 10; i++) expect((await first.auth.mfa.enroll({ factorType: 'totp', friendlyName: `App ${i}` })).error).toBeNull();
    // A factor left unverified is not activated from aal1 either.
    const unverified = (await first.auth.mfa.listFactors()).data?.all.find((f) => f.status === 'unverified') as { id: string };
    const activation = await second.auth.mfa.challengeAndVerify({ factorId: unverified.id, code: '123456' });
    expect([activation.error?.status, activation.error?.code]).toEqual([403, 'insufficient_aal']);
    const eleventh = await first.auth.mfa.enroll({ factorType: 'totp' });
    expect([eleventh.error?.status, eleventh.error?.code]).toEqual([422, 'too_many_enrolled_mfa_factors']);

    const challenge = (await second.auth.mfa.challenge({ factorId: factor.id })).data as { id: string };
    const table = await (api.table as NonNullable<typeof api.table>)();
    const stored = (await table.entities.mfaChallenge.get({ challengeId: challenge.id }).go()).data;
    await table.entities.mfaChallenge.put({ ...(stored as NonNullable<typeof stored>), expiresAt: Math.floor(Date.now() / 1000) - 1 }).go();
    const expired = await second.auth.mfa.verify({
      factorId: factor.id,
      challengeId: challenge.id,
      code: totpCode(factor.totp.secret, step + 1),
    });
    expect([expired.error?.status, expired.error?.code]).toEqual([422, 'mfa_challenge_expired']);

    const valid = new Set([-1, 0, 1, 2].map((d) => totpCode(factor.totp.secret, step + d)));
    const wrong = ['000000', '111111', '222222'].find((c) => !valid.has(c)) as string;
    for (let i = 0; i < 5; i++) await second.auth.mfa.challengeAndVerify({ factorId: factor.id, code: wrong });
    const limited = await second.auth.mfa.challengeAndVerify({ factorId: factor.id, code: totpCode(factor.totp.secret, step + 1) });
    expect([limited.error?.status, limited.error?.code]).toEqual([429, 'over_request_rate_limit']);
  });

  it('the reset flow of an account with a factor: a new password through the link, but no new address, from aal1', async () => {
    const first = await signedUp();
    const { data } = await first.auth.mfa.enroll({ factorType: 'totp' });
    const factor = data as { id: string; totp: { secret: string } };
    await first.auth.mfa.challengeAndVerify({ factorId: factor.id, code: totpCode(factor.totp.secret) });

    const table = await (api.table as NonNullable<typeof api.table>)();
    const claim = (await table.entities.emailClaim.get({ email: first.email }).go({ consistent: true })).data;
    const user = (await table.entities.user.get({ userUuid: claim?.userUuid as string }).go({ consistent: true })).data;
    const { issueToken } = await import('#lib/auth/account-tokens.ts');
    const link = await issueToken(table, { purpose: 'recovery', email: first.email, user: user as NonNullable<typeof user> }, new Date());
    const reset = authClient(api);
    expect((await reset.auth.verifyOtp({ token_hash: link, type: 'recovery' })).error).toBeNull();
    expect((await reset.auth.mfa.getAuthenticatorAssuranceLevel()).data).toMatchObject({ currentLevel: 'aal1', nextLevel: 'aal2' });
    const moved = await reset.auth.updateUser({ email: `moved-${first.email}` });
    expect([moved.error?.status, moved.error?.code]).toEqual([403, 'insufficient_aal']);
    expect((await reset.auth.updateUser({ password: 'a new passphrase for sure' })).error).toBeNull();
  });
});
