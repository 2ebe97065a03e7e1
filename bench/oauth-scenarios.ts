import { createHash, randomBytes } from 'node:crypto';
import { signInAt } from '#test/helpers/oidc-idp.ts';
import { type ApiRequest, callDirect, expectStatus } from './invoke.ts';
import { BENCH_APP_URL, BENCH_PROVIDER } from './scenario-services.ts';
import { PASSWORD, inParallel, mailedToken, signUp } from './seed.ts';
import type { Scenario } from './scenarios.ts';

/**
 * Provider sign-in's scenarios (docs/sso.md), both APIs, against the OpenID provider run.ts starts
 * on loopback (oidc-provider, anyone signing in: a subject that is an address is that address).
 * A flow and a code work once, so the calls that use one up get a pool of them.
 */

/** Flows and codes made ahead: enough for the load part's sequential runs, which stop when a pool is used up. */
const POOL = 60;

const issuer = (): string => {
  const url = process.env.OAUTH_BENCH_ISSUER;
  if (!url) throw new Error('OAUTH_BENCH_ISSUER is not set: run the benchmark with npm run bench');
  return url;
};

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

const startPath = (challenge: string) =>
  `/api/auth/oauth/${BENCH_PROVIDER}?${new URLSearchParams({ redirectTo: BENCH_APP_URL, codeChallenge: challenge })}`;

const pathOf = (url: string) => {
  const { pathname, search } = new URL(url);
  return `${pathname}${search}`;
};

/** `subject` signed in at the provider: the callback request the browser then makes, and the app's verifier. */
const atCallback = async (subject: string) => {
  const keys = pkce();
  const started = expectStatus(await callDirect({ method: 'GET', path: startPath(keys.challenge) }), 302, 'start');
  return { verifier: keys.verifier, path: pathOf(await signInAt(issuer(), started.location as string, subject)) };
};

/** The whole flow to the app's code. */
const codeFor = async (subject: string) => {
  const { verifier, path } = await atCallback(subject);
  const back = expectStatus(await callDirect({ method: 'GET', path }), 302, 'callback');
  const code = new URL(back.location as string).searchParams.get('code');
  if (!code) throw new Error(`the callback refused: ${back.location}`);
  return { code, verifier };
};

const sessionFor = async (subject: string) => {
  const { code, verifier } = await codeFor(subject);
  const { body } = expectStatus(
    await callDirect({ method: 'POST', path: '/api/auth/oauth/token', json: { code, codeVerifier: verifier } }),
    200,
    'trade',
  );
  return body.data.session.access_token as string;
};

let subjects = 0;
const freshSubject = (name: string) => `${name}-${Date.now().toString(36)}-${++subjects}@example.com`;

/** Accounts with a password and a linked provider identity: the token and the identity's id, to unlink. */
const linkedIdentities = (count: number) =>
  inParallel(Math.min(count, POOL), 4, async () => {
    const account = await signUp('oauth-unlink');
    // A password reset proves the mailbox: only then does a provider's address link (docs/sso.md). It ends the sign-up's session.
    const reset = await callDirect({
      method: 'POST',
      path: '/api/auth/reset',
      json: { token: await mailedToken('recovery', account), password: PASSWORD },
    });
    const token = expectStatus(reset, 200, 'reset').body.data.session.access_token as string;
    await codeFor(account.email);
    const { body } = expectStatus(await callDirect({ method: 'GET', path: '/api/auth/identities', token }), 200, 'identities');
    const identity = (body.data as { provider: string; identity_id: string }[]).find((i) => i.provider === BENCH_PROVIDER);
    return { token, identityId: identity?.identity_id as string };
  });

const at =
  <T>(pool: readonly T[], make: (item: T) => ApiRequest) =>
  (i: number) => {
    const item = pool[i];
    return item === undefined ? undefined : make(item);
  };

export const oauthScenarios = (): Scenario[] => [
  {
    label: 'GET /api/auth/oauth/{provider}',
    name: 'auth-oauth-authorize',
    status: 302,
    prepare: async () => {
      const { challenge } = pkce();
      return () => ({ method: 'GET', path: startPath(challenge) });
    },
  },
  {
    label: 'GET /auth/v1/authorize',
    name: 'gotrue-authorize',
    status: 302,
    prepare: async () => {
      const query = new URLSearchParams({ provider: BENCH_PROVIDER, redirect_to: BENCH_APP_URL, code_challenge: pkce().challenge });
      return () => ({ method: 'GET', path: `/auth/v1/authorize?${query}` });
    },
  },
  {
    label: 'GET /auth/v1/callback (a linked identity signs in)',
    name: 'auth-oauth-callback',
    status: 302,
    prepare: async (count) => {
      const subject = freshSubject('oauth-returning');
      await sessionFor(subject);
      const flows = await inParallel(Math.min(count, POOL), 4, () => atCallback(subject));
      return at(flows, (f) => ({ method: 'GET', path: f.path }));
    },
  },
  {
    label: 'POST /api/auth/oauth/token',
    name: 'auth-oauth-token',
    status: 200,
    prepare: async (count) => {
      const subject = freshSubject('oauth-trade');
      const codes = await inParallel(Math.min(count, POOL), 4, () => codeFor(subject));
      return at(codes, (c) => ({ method: 'POST', path: '/api/auth/oauth/token', json: { code: c.code, codeVerifier: c.verifier } }));
    },
  },
  {
    label: 'GET /api/auth/identities',
    name: 'auth-identities-list',
    status: 200,
    prepare: async () => {
      const token = await sessionFor(freshSubject('oauth-list'));
      return () => ({ method: 'GET', path: '/api/auth/identities', token });
    },
  },
  {
    label: 'POST /api/auth/identities (start a link)',
    name: 'auth-identities-link',
    status: 200,
    prepare: async () => {
      const token = await sessionFor(freshSubject('oauth-link'));
      const json = { provider: BENCH_PROVIDER, redirectTo: BENCH_APP_URL, codeChallenge: pkce().challenge };
      return () => ({ method: 'POST', path: '/api/auth/identities', token, json });
    },
  },
  {
    label: 'GET /auth/v1/user/identities/authorize',
    name: 'gotrue-identities-authorize',
    status: 200,
    prepare: async () => {
      const token = await sessionFor(freshSubject('oauth-link-gotrue'));
      const query = new URLSearchParams({
        provider: BENCH_PROVIDER,
        redirect_to: BENCH_APP_URL,
        code_challenge: pkce().challenge,
        skip_http_redirect: 'true',
      });
      return () => ({ method: 'GET', path: `/auth/v1/user/identities/authorize?${query}`, headers: { authorization: `Bearer ${token}` } });
    },
  },
  {
    label: 'DELETE /api/auth/identities/{identityId}',
    name: 'auth-identities-delete',
    status: 200,
    prepare: async (count) =>
      at(await linkedIdentities(count), (l) => ({ method: 'DELETE', path: `/api/auth/identities/${l.identityId}`, token: l.token })),
  },
  {
    label: 'DELETE /auth/v1/user/identities/{identityId}',
    name: 'gotrue-identities-delete',
    status: 200,
    prepare: async (count) =>
      at(await linkedIdentities(count), (l) => ({
        method: 'DELETE',
        path: `/auth/v1/user/identities/${l.identityId}`,
        headers: { authorization: `Bearer ${l.token}` },
      })),
  },
];
