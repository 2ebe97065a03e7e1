import { decodeBase32IgnorePadding } from '@oslojs/encoding';
import { generateHOTP } from '@oslojs/otp';
import type { Api, TestUser } from './api.ts';

/** What an authenticator app shows for `secret` (base32, as enrolment answers it) at time step `step` (default: now). */
export const totpCode = (secret: string, step = Math.floor(Date.now() / 30_000)): string =>
  generateHOTP(decodeBase32IgnorePadding(secret), BigInt(step), 6);

export const currentStep = (): number => Math.floor(Date.now() / 30_000);

/** The claims of an access token (not verified: the tests read what Roster signed). */
export const claimsOf = (token: string): { aal: string; amr: { method: string; timestamp: number }[]; session_id: string } =>
  JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString('utf8'));

/** Sets up a TOTP factor for `user`: its id and key. */
export const enrolTotp = async (api: Api, user: Pick<TestUser, 'token'>, name = 'Phone') => {
  const res = await api.call('POST', '/api/auth/factors', { token: user.token, json: { factor_type: 'totp', friendly_name: name } });
  if (res.status !== 201) throw new Error(`enrol failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { factorId: res.body.data.id as string, secret: res.body.data.totp.secret as string, body: res.body.data };
};

/** A challenge, then a verify with `code` (default: the current code): the verify's reply. */
export const challengeAndVerify = async (api: Api, token: string, factorId: string, code: string) => {
  const challenge = await api.call('POST', `/api/auth/factors/${factorId}/challenge`, { token });
  if (challenge.status !== 201) throw new Error(`challenge failed: ${challenge.status} ${JSON.stringify(challenge.body)}`);
  return api.call('POST', `/api/auth/factors/${factorId}/verify`, { token, json: { challenge_id: challenge.body.data.id, code } });
};

/**
 * A user with a verified TOTP factor and an aal2 session: `token` is aal2, `aal1Token` a second
 * session's, opened by password after the factor was verified. `lastStep` is the step used.
 */
export const mfaUser = async (api: Api, user: TestUser) => {
  const { factorId, secret } = await enrolTotp(api, user);
  const step = currentStep();
  const verified = await challengeAndVerify(api, user.token, factorId, totpCode(secret, step));
  if (verified.status !== 200) throw new Error(`verify failed: ${verified.status} ${JSON.stringify(verified.body)}`);
  const signIn = await api.call('POST', '/api/auth/signin', { json: { email: user.email, password: user.password } });
  return {
    factorId,
    secret,
    lastStep: step,
    token: verified.body.data.session.access_token as string,
    refreshToken: verified.body.data.session.refresh_token as string,
    recoveryCodes: verified.body.data.recovery_codes as string[],
    aal1Token: signIn.body.data.session.access_token as string,
  };
};
