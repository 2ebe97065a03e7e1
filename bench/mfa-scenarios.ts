import { currentStep, totpCode } from '#test/helpers/mfa.ts';
import { softAuthenticator } from '#test/helpers/passkeys.ts';
import { type ApiRequest, callDirect, expectStatus } from './invoke.ts';
import { type Account, PASSWORD, inParallel, signUp } from './seed.ts';
import type { Scenario } from './scenarios.ts';

/**
 * The second-factor routes' scenarios (docs/mfa.md), both APIs: accounts with factors made through
 * the API. A code works once, so each step-up gets an account of its own, with a verified factor
 * and a challenge ready, and the next step's code.
 */

/** Accounts made ahead for the calls that use one up: enough for the load part's runs. */
const POOL = 20;

const call = async (req: ApiRequest, status: number, what: string) => expectStatus(await callDirect(req), status, what);

const enrol = async (token: string) => {
  const { body } = await call({ method: 'POST', path: '/api/auth/factors', token, json: { factor_type: 'totp' } }, 201, 'enrol');
  return { factorId: body.data.id as string, secret: body.data.totp.secret as string };
};

const challenge = async (token: string, factorId: string): Promise<string> =>
  (await call({ method: 'POST', path: `/api/auth/factors/${factorId}/challenge`, token }, 201, 'challenge')).body.data.id;

/** An account with a verified factor: its aal2 token, a password session's aal1 token, the step used, its recovery codes. */
const withFactor = async (name: string) => {
  const account = await signUp(name);
  const { factorId, secret } = await enrol(account.token);
  const step = currentStep();
  const { body } = await call(
    {
      method: 'POST',
      path: `/api/auth/factors/${factorId}/verify`,
      token: account.token,
      json: { challenge_id: await challenge(account.token, factorId), code: totpCode(secret, step) },
    },
    200,
    'verify',
  );
  const signIn = await call(
    { method: 'POST', path: '/api/auth/signin', json: { email: account.email, password: PASSWORD } },
    200,
    'sign-in',
  );
  return {
    factorId,
    secret,
    step,
    aal2: body.data.session.access_token as string,
    aal1: signIn.body.data.session.access_token as string,
    codes: body.data.recovery_codes as string[],
  };
};

/** A step-up ready to send: an aal1 session, its challenge, and the code of the step after the one used. */
const readyStepUps = (count: number, name: string) =>
  inParallel(Math.min(count, POOL), 4, async () => {
    const f = await withFactor(name);
    return { ...f, challengeId: await challenge(f.aal1, f.factorId), code: totpCode(f.secret, f.step + 1) };
  });

/** Unverified factors, ten an account (the most an account may have), each account's one at a time. */
const unverifiedFactors = async (count: number, name: string) => {
  const accounts = await inParallel(Math.ceil(Math.min(count, POOL * 10) / 10), 4, () => signUp(name));
  const perAccount = await inParallel(accounts.length, 4, async (a) => {
    const { token } = accounts[a] as Account;
    const factors: { token: string; factorId: string }[] = [];
    for (let i = 0; i < 10; i++) factors.push({ token, factorId: (await enrol(token)).factorId });
    return factors;
  });
  return perAccount.flat().slice(0, count);
};

const at =
  <T>(pool: readonly T[], make: (item: T) => ApiRequest) =>
  (i: number) => {
    const item = pool[i];
    return item === undefined ? undefined : make(item);
  };

/** An account with one unverified factor (listed, renamed, challenged), made on first need. */
let lister: Promise<{ token: string; factorId: string }> | undefined;
const listed = () => (lister ??= signUp('factors').then(async (account) => ({ token: account.token, ...(await enrol(account.token)) })));

/** An account with a passkey registered on an authenticator made in Node (test/helpers), and a password session. */
const withPasskey = async (name: string) => {
  const account = await signUp(name);
  const authenticator = await softAuthenticator();
  const { body: enrolled } = await call(
    { method: 'POST', path: '/api/auth/factors', token: account.token, json: { factor_type: 'webauthn' } },
    201,
    'enrol a passkey',
  );
  const factorId = enrolled.data.id as string;
  const { body: creation } = await call(
    { method: 'POST', path: `/api/auth/factors/${factorId}/challenge`, token: account.token },
    201,
    'challenge',
  );
  await call(
    {
      method: 'POST',
      path: `/api/auth/factors/${factorId}/verify`,
      token: account.token,
      json: {
        challenge_id: creation.data.id,
        webauthn: { type: 'create', credential_response: authenticator.create(creation.data.webauthn.credential_options.publicKey) },
      },
    },
    200,
    'register a passkey',
  );
  const signIn = await call(
    { method: 'POST', path: '/api/auth/signin', json: { email: account.email, password: PASSWORD } },
    200,
    'sign-in',
  );
  return { factorId, authenticator, aal1: signIn.body.data.session.access_token as string };
};

/** Passkey answers ready to send, an account each (an authenticator's counter must go up in order): a step-up's, or a sign-in's. */
const readyPasskeyAnswers = (count: number, name: string, kind: 'step-up' | 'sign-in') =>
  inParallel(Math.min(count, POOL), 4, async () => {
    const p = await withPasskey(name);
    const { body } =
      kind === 'step-up'
        ? await call({ method: 'POST', path: `/api/auth/factors/${p.factorId}/challenge`, token: p.aal1 }, 201, 'challenge')
        : await call({ method: 'POST', path: '/api/auth/passkeys/challenge' }, 201, 'sign-in challenge');
    const answer = p.authenticator.get(body.data.webauthn.credential_options.publicKey);
    return { ...p, json: { challenge_id: body.data.id as string, webauthn: { type: 'request', credential_response: answer } } };
  });

/** The account security page's cookie for an aal2 session of an account with a verified factor. */
const securityCookie = async () => `roster_security=${(await withFactor('security-page')).aal2}`;

export const mfaScenarios = (): Scenario[] => [
  {
    label: 'GET /account/security (signed in)',
    name: 'page-security',
    status: 200,
    prepare: async () => {
      const cookie = await securityCookie();
      return () => ({ method: 'GET', path: '/account/security', headers: { cookie } });
    },
  },
  {
    label: 'POST /account/security (new recovery codes)',
    name: 'page-security-action',
    status: 200,
    prepare: async () => {
      const cookie = await securityCookie();
      return () => ({
        method: 'POST',
        path: '/account/security',
        form: 'action=regenerate-codes',
        headers: { cookie, 'sec-fetch-site': 'same-origin' },
      });
    },
  },
  {
    label: 'POST /api/auth/passkeys/challenge',
    name: 'auth-passkeys-challenge',
    status: 201,
    prepare: async () => () => ({ method: 'POST', path: '/api/auth/passkeys/challenge' }),
  },
  {
    label: 'POST /api/auth/passkeys/sign-in',
    name: 'auth-passkeys-sign-in',
    status: 200,
    prepare: async (count) =>
      at(await readyPasskeyAnswers(count, 'passkey-sign-in', 'sign-in'), (p) => ({
        method: 'POST',
        path: '/api/auth/passkeys/sign-in',
        json: p.json,
      })),
  },
  {
    label: 'POST /api/auth/factors/{id}/verify (passkey step-up)',
    name: 'auth-factors-verify',
    status: 200,
    // No guess buckets: the user's partition is all it touches.
    bound: {
      key: "the user's partition (user, factor and session read; factor and session written in a transaction)",
      per: 'user',
      rcu: 3,
      wcu: 2,
    },
    prepare: async (count) =>
      at(await readyPasskeyAnswers(count, 'passkey-step-up', 'step-up'), (p) => ({
        method: 'POST',
        path: `/api/auth/factors/${p.factorId}/verify`,
        token: p.aal1,
        json: p.json,
      })),
  },
  {
    label: 'GET /api/auth/factors',
    name: 'auth-factors-list',
    status: 200,
    prepare: async () => {
      const { token } = await listed();
      return () => ({ method: 'GET', path: '/api/auth/factors', token });
    },
  },
  {
    label: 'POST /api/auth/factors (TOTP)',
    name: 'auth-factors-enrol',
    status: 201,
    // An account each: enrolments of one account at once would race on its factor list.
    prepare: async (count) =>
      at(await inParallel(Math.min(count, POOL), 4, () => signUp('enrol')), (account) => ({
        method: 'POST',
        path: '/api/auth/factors',
        token: account.token,
        json: { factor_type: 'totp' },
      })),
  },
  {
    label: 'PUT /api/auth/factors/{id}',
    name: 'auth-factors-rename',
    status: 200,
    prepare: async () => {
      const { token, factorId } = await listed();
      return (i) => ({ method: 'PUT', path: `/api/auth/factors/${factorId}`, token, json: { friendly_name: `Phone ${i}` } });
    },
  },
  {
    label: 'DELETE /api/auth/factors/{id} (unverified)',
    name: 'auth-factors-delete',
    status: 200,
    prepare: async (count) =>
      at(await unverifiedFactors(count, 'unenrol'), (f) => ({ method: 'DELETE', path: `/api/auth/factors/${f.factorId}`, token: f.token })),
  },
  {
    label: 'POST /api/auth/factors/{id}/challenge',
    name: 'auth-factors-challenge',
    status: 201,
    prepare: async () => {
      const { token, factorId } = await listed();
      return () => ({ method: 'POST', path: `/api/auth/factors/${factorId}/challenge`, token });
    },
  },
  {
    label: 'POST /api/auth/factors/{id}/verify (step-up)',
    name: 'auth-factors-verify',
    status: 200,
    prepare: async (count) =>
      at(await readyStepUps(count, 'step-up'), (s) => ({
        method: 'POST',
        path: `/api/auth/factors/${s.factorId}/verify`,
        token: s.aal1,
        json: { challenge_id: s.challengeId, code: s.code },
      })),
  },
  {
    label: 'POST /api/auth/recovery-codes',
    name: 'auth-recovery-codes-create',
    status: 201,
    prepare: async () => {
      const { aal2 } = await withFactor('regenerate');
      return () => ({ method: 'POST', path: '/api/auth/recovery-codes', token: aal2 });
    },
  },
  {
    label: 'POST /api/auth/recovery-codes/verify',
    name: 'auth-recovery-codes-verify',
    status: 200,
    prepare: async (count) => {
      const accounts = await inParallel(Math.ceil(Math.min(count, POOL * 10) / 10), 4, () => withFactor('recovery-code'));
      const uses = accounts.flatMap((a) => a.codes.map((code) => ({ token: a.aal1, code })));
      return at(uses, (u) => ({ method: 'POST', path: '/api/auth/recovery-codes/verify', token: u.token, json: { code: u.code } }));
    },
  },
  {
    label: 'POST /auth/v1/factors',
    name: 'gotrue-factors-enrol',
    status: 200,
    // An account each: enrolments of one account at once would race on its factor list.
    prepare: async (count) =>
      at(await inParallel(Math.min(count, POOL), 4, () => signUp('gotrue-enrol')), (account) => ({
        method: 'POST',
        path: '/auth/v1/factors',
        token: account.token,
        json: { factor_type: 'totp' },
      })),
  },
  {
    label: 'POST /auth/v1/factors/{id}/challenge',
    name: 'gotrue-factors-challenge',
    status: 200,
    prepare: async () => {
      const { token, factorId } = await listed();
      return () => ({ method: 'POST', path: `/auth/v1/factors/${factorId}/challenge`, token, json: { factorId } });
    },
  },
  {
    label: 'POST /auth/v1/factors/{id}/verify (step-up)',
    name: 'gotrue-factors-verify',
    status: 200,
    prepare: async (count) =>
      at(await readyStepUps(count, 'gotrue-step-up'), (s) => ({
        method: 'POST',
        path: `/auth/v1/factors/${s.factorId}/verify`,
        token: s.aal1,
        json: { challenge_id: s.challengeId, code: s.code },
      })),
  },
  {
    label: 'DELETE /auth/v1/factors/{id} (unverified)',
    name: 'gotrue-factors-delete',
    status: 200,
    prepare: async (count) =>
      at(await unverifiedFactors(count, 'gotrue-unenrol'), (f) => ({
        method: 'DELETE',
        path: `/auth/v1/factors/${f.factorId}`,
        token: f.token,
      })),
  },
];
