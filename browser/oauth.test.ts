/**
 * Provider sign-in end to end in headless Chromium: an app's page with a "Sign in with Google"
 * button (the app's server runs auth-js, the real client); the provider's own login and consent
 * pages (panva's oidc-provider on loopback); Roster's callback; back on the app's callback page,
 * whose server trades the code with the verifier it kept for this browser and shows who signed in.
 */
import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { GoTrueClient } from '@supabase/auth-js';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '#infra/dynamodb-local.ts';
import type { LocalServer } from '#lib/http/server.ts';
import { launchChromium } from '#scripts/docs-screenshot.ts';
import { startIdp } from '#test/helpers/oidc-idp.ts';

const apiPort = await freePort();
const appPort = await freePort();
const origin = `http://localhost:${apiPort}`;
const app = `http://localhost:${appPort}`;
const idp = await startIdp({ redirectUri: `${origin}/auth/v1/callback`, emailInIdToken: true });
// Read when the handlers load, which is only after this.
process.env.PUBLIC_URL = origin;
process.env.OAUTH_REDIRECT_URLS = `${app}/auth/callback`;
process.env.OAUTH_PROVIDERS = JSON.stringify([{ id: 'google', type: 'oidc', issuer: idp.issuer, clientId: idp.clientId }]);
process.env.OAUTH_CLIENT_SECRETS = JSON.stringify({ google: idp.clientSecret });

/**
 * The app, as a server-rendered app runs auth-js (Supabase's SSR guide): its server starts the
 * sign-in and keeps the PKCE verifier in the browser's own session (a cookie), then trades the code
 * on its callback route, server to server. Roster answers no CORS, so the browser never calls it
 * directly; it is only sent through Roster's authorize and callback.
 */
const sessions = new Map<string, ReturnType<typeof authClientOf>>();
const authClientOf = (store: Map<string, string>) =>
  new GoTrueClient({
    url: `${origin}/auth/v1`,
    flowType: 'pkce',
    detectSessionInUrl: false,
    autoRefreshToken: false,
    storageKey: 'app',
    storage: {
      getItem: (key) => store.get(key) ?? null,
      setItem: (key, value) => void store.set(key, value),
      removeItem: (key) => void store.delete(key),
    },
  });

const HOME = `<!doctype html><html><head><meta charset="utf-8"><title>App</title></head>
<body><main><h1>The app</h1><form method="post" action="/login"><button>Sign in with Google</button></form></main></body></html>`;
const signedIn = (text: string, id: string) => `<!doctype html><html><head><meta charset="utf-8"><title>App</title></head>
<body><main><h1>The app</h1><p id="${id}">${text}</p></main></body></html>`;

const appRoute = async (req: IncomingMessage, res: ServerResponse) => {
  const url = new URL(req.url ?? '/', app);
  const sid = /sid=([\w-]+)/.exec(req.headers.cookie ?? '')?.[1] ?? randomUUID();
  const auth = sessions.get(sid) ?? authClientOf(new Map());
  sessions.set(sid, auth);
  const cookie = { 'set-cookie': `sid=${sid}; Path=/; HttpOnly; SameSite=Lax` };
  if (req.method === 'POST' && url.pathname === '/login') {
    const { data } = await auth.signInWithOAuth({
      provider: 'google',
      options: { redirectTo: `${app}/auth/callback`, skipBrowserRedirect: true },
    });
    res.writeHead(303, { ...cookie, location: data.url as string });
    return res.end();
  }
  if (url.pathname === '/auth/callback') {
    const error = url.searchParams.get('error_code');
    const { data, error: failed } = error
      ? { data: null, error: null }
      : await auth.exchangeCodeForSession(url.searchParams.get('code') ?? '');
    res.writeHead(200, { ...cookie, 'content-type': 'text/html; charset=utf-8' });
    return res.end(error || failed ? signedIn(error ?? failed?.message ?? '', 'error') : signedIn(data?.user?.email ?? '', 'who'));
  }
  res.writeHead(200, { ...cookie, 'content-type': 'text/html; charset=utf-8' });
  return res.end(HOME);
};

let server: LocalServer;
let appServer: Server;
let browser: Browser;

beforeAll(async () => {
  const { startLocalServer } = await import('#lib/http/server.ts');
  server = await startLocalServer(apiPort, 'localhost');
  appServer = createServer((req, res) => void appRoute(req, res));
  await new Promise<void>((resolve) => appServer.listen(appPort, 'localhost', resolve));
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => appServer?.close(resolve));
  await server?.close();
  await idp.stop();
});

describe('provider sign-in in Chromium', () => {
  it("the app's button, the provider's login page, back to the app signed in", async () => {
    const email = `chromium-${Date.now()}@example.com`;
    idp.people.set('chromium-person', { email, email_verified: true, given_name: 'Ada', family_name: 'Lovelace' });
    const context = await browser.newContext();
    const tab = await context.newPage();
    await tab.goto(app);
    await tab.getByRole('button', { name: 'Sign in with Google' }).click();
    // The provider's own pages: its login form, then its consent.
    await tab.waitForURL(`${idp.issuer}/**`);
    await tab.locator('input[name="login"]').fill('chromium-person');
    await tab.locator('input[name="password"]').fill('anything');
    await tab.locator('button[type="submit"]').click();
    await tab.locator('button[type="submit"]').click();
    await tab.waitForURL(`${app}/auth/callback?**`);
    await expect.poll(() => tab.locator('#who').textContent()).toBe(email);
    // Nothing in the app's URL is a token: a one-time code, spent already.
    const url = new URL(tab.url());
    expect([...url.searchParams.keys()]).toEqual(['code']);
    expect(url.hash).toBe('');
    await context.close();
  });

  it('a refusal comes back to the app as its error code', async () => {
    idp.people.set('unverified-person', { email: `unverified-${Date.now()}@example.com`, email_verified: false });
    const context = await browser.newContext();
    const tab = await context.newPage();
    await tab.goto(app);
    await tab.getByRole('button', { name: 'Sign in with Google' }).click();
    await tab.waitForURL(`${idp.issuer}/**`);
    await tab.locator('input[name="login"]').fill('unverified-person');
    await tab.locator('input[name="password"]').fill('anything');
    await tab.locator('button[type="submit"]').click();
    await tab.locator('button[type="submit"]').click();
    await tab.waitForURL(`${app}/auth/callback?**`);
    await expect.poll(() => tab.locator('#error').textContent()).toBe('provider_email_needs_verification');
    await context.close();
  });
});
