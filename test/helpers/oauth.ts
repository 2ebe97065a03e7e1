import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { Api } from './api.ts';

/**
 * A provider sign-in as an app and its browser make one: a PKCE verifier of the app's own, the
 * start at Roster, the provider's pages (the caller's `atProvider`), Roster's callback, and the
 * app's redirect URL with its `code` (or error) read back.
 */

/** The app's URL Roster may send the browser back to (the tests' OAUTH_REDIRECT_URLS). */
export const APP_URL = 'http://localhost:5173/auth/callback';
/** The public URL the tests' Roster believes it has: the providers are registered with its callback. */
export const PUBLIC_URL = 'http://localhost:3999';
export const CALLBACK = `${PUBLIC_URL}/auth/v1/callback`;

export const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

/** The start's URL at Roster, in the seed's style or GoTrue's. */
export const startPath = (provider: string, challenge: string, { gotrue = false, redirectTo = APP_URL } = {}) =>
  gotrue
    ? `/auth/v1/authorize?${new URLSearchParams({ provider, redirect_to: redirectTo, code_challenge: challenge, code_challenge_method: 's256' })}`
    : `/api/auth/oauth/${provider}?${new URLSearchParams({ redirectTo, codeChallenge: challenge })}`;

/** Roster's 302 to the provider: the provider's URL. */
export const startAt = async (api: Api, path: string, token?: string): Promise<string> => {
  const res = await api.call('GET', path, token ? { token } : {});
  expect(res.status, JSON.stringify(res.body)).toBe(302);
  return res.headers.get('location') as string;
};

/** The provider sent the browser to `callbackUrl`: Roster's answer (a 302 to the app, or an error). */
export const callback = (api: Api, callbackUrl: string) => {
  const url = new URL(callbackUrl);
  expect(url.origin + url.pathname).toBe(CALLBACK);
  return api.call('GET', `${url.pathname}${url.search}`);
};

/** Where Roster sent the browser back to, read as the app reads it. */
export const backAtApp = (location: string | null) => {
  const url = new URL(location as string);
  expect(url.origin + url.pathname).toBe(APP_URL);
  return Object.fromEntries(url.searchParams);
};

/** The whole flow through the callback: the app's query (`code`, or `error`, `error_code`, `error_description`). */
export const throughProvider = async (
  api: Api,
  provider: string,
  atProvider: (url: string) => Promise<string>,
  options: { gotrue?: boolean; token?: string; linkPath?: string } = {},
) => {
  const keys = pkce();
  const providerUrl = options.linkPath
    ? await linkUrl(api, options.linkPath, provider, keys.challenge, options.token as string)
    : await startAt(api, startPath(provider, keys.challenge, options));
  const res = await callback(api, await atProvider(providerUrl));
  expect(res.status, JSON.stringify(res.body)).toBe(302);
  return { ...keys, query: backAtApp(res.headers.get('location')) };
};

const linkUrl = async (api: Api, path: string, provider: string, challenge: string, token: string) => {
  const res = path.startsWith('/auth/v1')
    ? await api.call(
        'GET',
        `${path}?${new URLSearchParams({ provider, redirect_to: APP_URL, code_challenge: challenge, code_challenge_method: 's256', skip_http_redirect: 'true' })}`,
        { token },
      )
    : await api.call('POST', path, { token, json: { provider, redirectTo: APP_URL, codeChallenge: challenge } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.data ?? res.body).url as string;
};

/** The code traded in the seed's style: the session answer. */
export const trade = (api: Api, code: string, verifier: string) =>
  api.call('POST', '/api/auth/oauth/token', { json: { code, codeVerifier: verifier } });

/**
 * Resets `user`'s password through its mailed link (a token made as the mailer makes it): only the
 * mailbox's owner can, so afterwards a provider's verified address may link to the account.
 */
export const resetThroughMailbox = async (api: Api, user: { email: string; uuid: string }, password: string): Promise<void> => {
  if (!api.table) throw new Error("resetThroughMailbox needs the server's table");
  const db = await api.table();
  const { issueToken } = await import('#lib/auth/account-tokens.ts');
  const stored = (await db.entities.user.get({ userUuid: user.uuid }).go()).data;
  if (!stored) throw new Error(`no account ${user.uuid}`);
  const token = await issueToken(db, { purpose: 'recovery', email: user.email, user: stored }, new Date());
  const res = await api.call('POST', '/api/auth/reset', { json: { token, password } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
};
