/**
 * Passkeys end to end in headless Chromium, with the DevTools protocol's virtual authenticator
 * (WebAuthn.addVirtualAuthenticator: a platform authenticator with resident keys and user
 * verification): the browser's own navigator.credentials makes and signs every answer, against
 * the local server on http://localhost (a secure context, and a valid relying party id; an IP
 * address is not). Both the seed-style API (PublicKeyCredential's JSON helpers) and auth-js's
 * `mfa.webauthn` methods (the real client, bundled for the page) are driven. No Chromium is a
 * failure, not a skip.
 */
import type * as AuthJs from '@supabase/auth-js';
import { build } from 'esbuild';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '#infra/dynamodb-local.ts';
import type { LocalServer } from '#lib/http/server.ts';
import { launchChromium } from '#scripts/docs-screenshot.ts';
import { type Api, apiAt, signUp } from '#test/helpers/api.ts';

const apiPort = await freePort();
const origin = `http://localhost:${apiPort}`;
// Read when the handlers load, which is only after this: the relying party is localhost, the origin this server's.
process.env.PUBLIC_URL = origin;

let api: Api;
let server: LocalServer;
let browser: Browser;
let context: BrowserContext;
/** auth-js as one script for the page (its IIFE sets globalThis.AuthJs). */
let authJs: string;

beforeAll(async () => {
  const { startLocalServer } = await import('#lib/http/server.ts');
  server = await startLocalServer(apiPort, 'localhost');
  api = apiAt(origin, process.env.TABLE_NAME);
  const bundled = await build({
    stdin: { contents: "export * from '@supabase/auth-js';", resolveDir: process.cwd() },
    bundle: true,
    format: 'iife',
    globalName: 'AuthJs',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
  });
  authJs = bundled.outputFiles[0]?.text ?? '';
  browser = await launchChromium();
  // The pages' CSP allows only Roster's own scripts: the test's script (auth-js) is let in here, not by Roster.
  context = await browser.newContext({ bypassCSP: true });
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/**
 * A page of this origin with a virtual authenticator of its own: built into the device
 * (`internal`, a laptop or phone holding passkeys) or a security key (`usb`).
 */
const withAuthenticator = async (
  transport: 'internal' | 'usb' = 'internal',
): Promise<{ page: Page; cdp: CDPSession; authenticatorId: string }> => {
  const page = await context.newPage();
  await page.goto(`${origin}/verify`);
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport,
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return { page, cdp, authenticatorId };
};

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- the API's answers, read in the page

/** What the page's scripts use of the browser (the project's TypeScript has no DOM library). */
interface PageGlobals {
  navigator: {
    credentials: {
      create: (options: unknown) => Promise<{ toJSON: () => Json }>;
      get: (options: unknown) => Promise<{ toJSON: () => Json }>;
    };
  };
  PublicKeyCredential: {
    parseCreationOptionsFromJSON: (json: unknown) => unknown;
    parseRequestOptionsFromJSON: (json: unknown) => unknown;
  };
  location: { origin: string };
  fetch: typeof fetch;
}

/** Runs in the page: a JSON call of the API, as a browser app makes it. */
const call = (page: Page, method: string, path: string, token?: string, json?: unknown): Promise<{ status: number; body: Json }> =>
  page.evaluate(
    async ({ method, path, token, json }) => {
      const res = await (globalThis as unknown as PageGlobals).fetch(path, {
        method,
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Token ${token}` } : {}) },
        ...(json === undefined ? {} : { body: JSON.stringify(json) }),
      });
      return { status: res.status, body: (await res.json()) as Json };
    },
    { method, path, token, json },
  );

/** Runs in the page: navigator.credentials.create or .get with the API's options, answering the credential's JSON. */
const ceremony = (page: Page, type: 'create' | 'request', options: Json): Promise<Json> =>
  page.evaluate(
    async ({ type, options }) => {
      const { navigator, PublicKeyCredential } = globalThis as unknown as PageGlobals;
      const credential =
        type === 'create'
          ? await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options) })
          : await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options) });
      return credential.toJSON();
    },
    { type, options },
  );

const claimsOf = (token: string): Json => JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString('utf8'));

describe('passkeys in Chromium, with a virtual authenticator', () => {
  it('registers a passkey, steps up with it, signs in with it alone, and removes it', async () => {
    const user = await signUp(api, 'chromium-passkey');
    const { page, cdp, authenticatorId } = await withAuthenticator();

    const enrolled = await call(page, 'POST', '/api/auth/factors', user.token, { factor_type: 'webauthn', friendly_name: 'Chromium' });
    expect(enrolled.status).toBe(201);
    const factorId = enrolled.body.data.id as string;
    const creation = await call(page, 'POST', `/api/auth/factors/${factorId}/challenge`, user.token);
    expect(creation.body.data.webauthn.type).toBe('create');
    const registration = await ceremony(page, 'create', creation.body.data.webauthn.credential_options.publicKey);
    const registered = await call(page, 'POST', `/api/auth/factors/${factorId}/verify`, user.token, {
      challenge_id: creation.body.data.id,
      webauthn: { type: 'create', credential_response: registration },
    });
    expect(registered.status).toBe(200);
    expect(claimsOf(registered.body.data.session.access_token).aal).toBe('aal2');
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toEqual([expect.objectContaining({ isResidentCredential: true, rpId: 'localhost' })]);

    // A password session steps up with the passkey as its second factor.
    const signIn = await call(page, 'POST', '/api/auth/signin', undefined, { email: user.email, password: user.password });
    const aal1 = signIn.body.data.session.access_token as string;
    expect(claimsOf(aal1).aal).toBe('aal1');
    const request = await call(page, 'POST', `/api/auth/factors/${factorId}/challenge`, aal1);
    expect(request.body.data.webauthn.type).toBe('request');
    const assertion = await ceremony(page, 'request', request.body.data.webauthn.credential_options.publicKey);
    const stepped = await call(page, 'POST', `/api/auth/factors/${factorId}/verify`, aal1, {
      challenge_id: request.body.data.id,
      webauthn: { type: 'request', credential_response: assertion },
    });
    expect(stepped.status).toBe(200);
    expect(claimsOf(stepped.body.data.session.access_token).amr.map((a: Json) => a.method)).toEqual(['mfa/webauthn', 'password']);

    // The passkey alone: no e-mail, no password; the authenticator offers the passkey it holds.
    const challenge = await call(page, 'POST', '/api/auth/passkeys/challenge');
    expect(challenge.status).toBe(201);
    const discoverable = await ceremony(page, 'request', challenge.body.data.webauthn.credential_options.publicKey);
    const signedIn = await call(page, 'POST', '/api/auth/passkeys/sign-in', undefined, {
      challenge_id: challenge.body.data.id,
      webauthn: { type: 'request', credential_response: discoverable },
    });
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.data.session.user.id).toBe(user.uuid);
    expect(claimsOf(signedIn.body.data.session.access_token)).toMatchObject({
      aal: 'aal2',
      amr: [{ method: 'mfa/webauthn' }, { method: 'passkey' }],
    });
    // The authenticator counted each use, and Roster kept up.
    const [used] = (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials;
    expect(used?.signCount).toBeGreaterThanOrEqual(2);

    const removed = await call(page, 'DELETE', `/api/auth/factors/${factorId}`, signedIn.body.data.session.access_token);
    expect(removed.status).toBe(200);
    const again = await call(page, 'POST', '/api/auth/passkeys/challenge');
    const stale = await ceremony(page, 'request', again.body.data.webauthn.credential_options.publicKey);
    const refused = await call(page, 'POST', '/api/auth/passkeys/sign-in', undefined, {
      challenge_id: again.body.data.id,
      webauthn: { type: 'request', credential_response: stale },
    });
    expect([refused.status, refused.body.error.code]).toEqual([401, 'invalid_credentials']);
    await page.close();
  });

  it("auth-js's mfa.webauthn.register and authenticate work unchanged against /auth/v1", async () => {
    const user = await signUp(api, 'authjs-passkey');
    // auth-js asks for a security key by default (cross-platform, its `hints`), as GoTrue's docs do.
    const { page } = await withAuthenticator('usb');
    await page.evaluate(authJs);
    const outcome = await page.evaluate(
      async ({ email, password }) => {
        const { GoTrueClient } = (globalThis as unknown as { AuthJs: typeof AuthJs }).AuthJs;
        const { location } = globalThis as unknown as PageGlobals;
        const auth = new GoTrueClient({ url: `${location.origin}/auth/v1`, storageKey: 'roster-passkeys', autoRefreshToken: false });
        const signIn = await auth.signInWithPassword({ email, password });
        if (signIn.error) return { step: 'signIn', error: signIn.error.message };
        const registered = await auth.mfa.webauthn.register({ friendlyName: 'Chromium via auth-js' });
        if (registered.error) return { step: 'register', error: registered.error.message };
        const afterRegister = await auth.mfa.getAuthenticatorAssuranceLevel();
        const factors = await auth.mfa.listFactors();
        const factorId = factors.data?.webauthn[0]?.id as string;
        // A fresh password session (registering ended the others), then the passkey as its second step.
        await auth.signOut({ scope: 'local' });
        await auth.signInWithPassword({ email, password });
        const before = await auth.mfa.getAuthenticatorAssuranceLevel();
        const authenticated = await auth.mfa.webauthn.authenticate({ factorId });
        if (authenticated.error) return { step: 'authenticate', error: authenticated.error.message };
        const after = await auth.mfa.getAuthenticatorAssuranceLevel();
        return {
          afterRegister: afterRegister.data?.currentLevel,
          factors: factors.data?.all.map((f) => [f.factor_type, f.status, f.friendly_name]),
          before: [before.data?.currentLevel, before.data?.nextLevel],
          after: after.data?.currentLevel,
          methods: after.data?.currentAuthenticationMethods.map((m) => (typeof m === 'string' ? m : m.method)),
        };
      },
      { email: user.email, password: user.password },
    );
    expect(outcome).toEqual({
      afterRegister: 'aal2',
      factors: [['webauthn', 'verified', 'Chromium via auth-js']],
      before: ['aal1', 'aal2'],
      after: 'aal2',
      methods: ['mfa/webauthn', 'password'],
    });
    await page.close();
  });
});
