/**
 * /account/security in headless Chromium: without JavaScript (its forms alone set up and activate
 * an authenticator app), and with it, where its buttons register a passkey on the DevTools
 * protocol's virtual authenticator, sign in with it alone and remove it. Screenshots go to a
 * temporary folder, or to PAGE_SCREENSHOTS (docs/images for the docs: docs/mfa.md says how).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeBase32IgnorePadding } from '@oslojs/encoding';
import { generateHOTP } from '@oslojs/otp';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '#infra/dynamodb-local.ts';
import type { LocalServer } from '#lib/http/server.ts';
import { launchChromium } from '#scripts/docs-screenshot.ts';
import { type Api, apiAt, signUp } from '#test/helpers/api.ts';

const apiPort = await freePort();
const origin = `http://localhost:${apiPort}`;
// Read when the handlers load, which is only after this: the page's origin, and the passkeys' relying party (localhost).
process.env.PUBLIC_URL = origin;
const shots = process.env.PAGE_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), 'roster-security-'));
const VIEWPORT = { width: 900, height: 1100 };

let api: Api;
let server: LocalServer;
let browser: Browser;

beforeAll(async () => {
  const { startLocalServer } = await import('#lib/http/server.ts');
  server = await startLocalServer(apiPort, 'localhost');
  api = apiAt(origin, process.env.TABLE_NAME);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const totpNow = (secret: string): string => generateHOTP(decodeBase32IgnorePadding(secret), BigInt(Math.floor(Date.now() / 30_000)), 6);

const signInWithPassword = async (page: Page, email: string, password: string) => {
  await page.goto(`${origin}/account/security`);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await expect.poll(() => page.locator('#email').textContent()).toBe(email);
};

describe('the account security page in Chromium', () => {
  it('without JavaScript: signs in, sets up an authenticator app from its key, activates it and shows the recovery codes', async () => {
    const user = await signUp(api, 'security-nojs');
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: VIEWPORT });
    const page = await context.newPage();
    await signInWithPassword(page, user.email, user.password);
    await expect.poll(() => page.locator('#level').textContent()).toBe('password only (aal1)');
    // The passkey buttons are the script's: hidden without it.
    expect(await page.locator('#passkey-register').isHidden()).toBe(true);
    await page.getByRole('button', { name: 'Add an authenticator app' }).click();
    const secret = (await page.locator('#totp-secret').textContent()) as string;
    expect(await page.locator('.qr svg').count()).toBe(1);
    await page.screenshot({ path: join(shots, 'security-enrol.png'), fullPage: true });
    await page.getByLabel('Code from your app').fill(totpNow(secret));
    await page.getByRole('button', { name: 'Activate' }).click();
    await expect.poll(() => page.locator('#level').textContent()).toBe('second factor proven (aal2)');
    expect(await page.locator('#recovery-codes code').count()).toBe(10);
    await page.screenshot({ path: join(shots, 'security-recovery-codes.png'), fullPage: true });
    await context.close();
  });

  it('with JavaScript: adds a passkey, signs in with it alone, and removes it', async () => {
    const user = await signUp(api, 'security-passkey');
    const context = await browser.newContext({ viewport: VIEWPORT });
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
    await signInWithPassword(page, user.email, user.password);
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await expect.poll(() => page.locator('.factors').textContent()).toContain('Passkey verified');
    expect(await page.locator('.notice').textContent()).toBe('The passkey is added.');
    expect(await page.locator('#level').textContent()).toBe('second factor proven (aal2)');
    // The account's first factor: its recovery codes, which the script got from the verify, shown once.
    expect(await page.locator('#recovery-codes code').count()).toBe(10);
    await page.screenshot({ path: join(shots, 'security-page.png'), fullPage: true });

    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => page.locator('.notice').textContent()).toBe('Signed out.');
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await expect.poll(() => page.locator('#email').textContent()).toBe(user.email);
    expect(await page.locator('.notice').textContent()).toBe('Signed in with your passkey.');
    expect(await page.locator('#level').textContent()).toBe('second factor proven (aal2)');

    await page.getByRole('button', { name: 'Remove Passkey' }).click();
    await expect.poll(() => page.locator('.notice').textContent()).toBe('The factor is removed.');
    expect(await page.locator('#factors').textContent()).toContain('None yet');
    await context.close();
  });
});
