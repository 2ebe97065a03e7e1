/**
 * The pages behind mailed links, end to end in headless Chromium: the local server's mailer sends
 * through SMTP to a real SMTP server in this process (test/helpers/smtp.ts), fed from the table's
 * stream as on AWS; the link is taken from the captured message, opened, the flow completed on the
 * page, and the API's state checked. No Chromium is a failure, not a skip.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '#infra/dynamodb-local.ts';
import type { LocalBackground } from '#infra/local-background.ts';
import type { LocalServer } from '#lib/http/server.ts';
import { launchChromium } from '#scripts/docs-screenshot.ts';
import { type PageVisit, openPage, unclean } from '#scripts/pages-screenshots.ts';
import { type Api, apiAt, createTeam, freshEmail, signUp } from '#test/helpers/api.ts';
import { testSmtp } from '#test/helpers/smtp.ts';

const smtpPort = await freePort();
const apiPort = await freePort();
const origin = `http://127.0.0.1:${apiPort}`;
// Read when the handlers and the mailer load, which is only after this: the links point at this server.
process.env.SMTP_URL = `smtp://127.0.0.1:${smtpPort}`;
process.env.MAIL_FROM = 'Roster <noreply@roster.example.com>';
process.env.PUBLIC_URL = origin;

const { inbox, start: startSmtp, stop: stopSmtp } = testSmtp(() => smtpPort);
const PASSWORD = 'correct horse battery staple';
/** Sign-up and reset hash a password: seconds on a loaded machine. */
const PATIENCE = { timeout: 30_000 };
const shots = mkdtempSync(join(tmpdir(), 'roster-pages-'));

let api: Api;
let server: LocalServer;
let poller: LocalBackground;
let browser: Browser;
const visits: PageVisit[] = [];

beforeAll(async () => {
  await startSmtp();
  const { startLocalServer } = await import('#lib/http/server.ts');
  server = await startLocalServer(apiPort);
  api = apiAt(server.url, process.env.TABLE_NAME);
  const { startLocalBackground } = await import('#infra/local-background.ts');
  poller = await startLocalBackground({
    baseDelayMs: 200,
    maxDelayMs: 1000,
  });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await poller?.stop();
  await server?.close();
  await stopSmtp();
});

/** The link in the one message to `to` whose subject matches `about`, as the mailer sent it. */
const linkMailedTo = async (to: string, about: RegExp): Promise<string> => {
  const deadline = Date.now() + 30_000;
  let mail = inbox.find((m) => m.to.includes(to) && about.test(m.subject));
  while (!mail && Date.now() < deadline) {
    await sleep(100);
    mail = inbox.find((m) => m.to.includes(to) && about.test(m.subject));
  }
  if (!mail) throw new Error(`no mail to ${to} about ${about}`);
  const link = mail.text.match(/http:\/\/127\.0\.0\.1:\d+\/\S+/u)?.[0];
  if (!link) throw new Error(`no link in ${mail.text}`);
  return link;
};

const open = async (link: string): Promise<PageVisit> => {
  expect(new URL(link).origin).toBe(origin);
  const visit = await openPage(browser, link);
  visits.push(visit);
  return visit;
};

describe('the pages behind mailed links, in Chromium', () => {
  it('invite: the mailed link, sign-up on the page, accept; the member is in the team and confirmed', async () => {
    const owner = await signUp(api, 'owner');
    const team = await createTeam(api, owner);
    const email = freshEmail('newcomer');
    expect(
      (await api.call('POST', `/api/teams/${team.slug}/invites`, { token: owner.token, json: { email, role: 'MEMBER' } })).status,
    ).toBe(201);
    const link = await linkMailedTo(email, /invited you/u);
    expect(link).toMatch(/\/invites\/[0-9a-f-]{36}\?token=/u);

    const { page } = await open(link);
    expect(await page.title()).toBe(`Join Team ${team.slug} · Roster`);
    expect(await page.locator('#team-name').textContent()).toBe(`Team ${team.slug}`);
    await page.screenshot({ path: join(shots, 'page-invite.png'), fullPage: true });
    await page.getByLabel('First name').fill('Grace');
    await page.getByLabel('Last name').fill('Hopper');
    await page.locator('#signup-password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.getByRole('button', { name: 'Accept' }).click();
    await expect.poll(() => page.locator('#status').textContent(), PATIENCE).toBe(`You joined Team ${team.slug}.`);

    const signin = await api.call('POST', '/api/auth/signin', { json: { email, password: PASSWORD } });
    expect(signin.body.data.session.user.email_confirmed_at).toEqual(expect.any(String));
    const members = await api.call('GET', `/api/teams/${team.slug}/members`, { token: owner.token });
    expect(members.body.data.map((m: { email: string; role: string }) => [m.email, m.role])).toContainEqual([email, 'MEMBER']);
    // Signing up from the link confirmed the address: no verification mail was needed.
    await sleep(1000);
    expect(inbox.filter((m) => m.to.includes(email) && /Confirm/u.test(m.subject))).toEqual([]);
  });

  it('verify: sign up, open the mailed link, press the button; the user is confirmed', async () => {
    const user = await signUp(api, 'verify', { confirmed: false });
    const link = await linkMailedTo(user.email, /Confirm your e-mail/u);
    expect(link).toMatch(/\/verify\?token=/u);
    const { page } = await open(link);
    await page.screenshot({ path: join(shots, 'page-verify.png'), fullPage: true });
    // Opening the page changed nothing.
    expect((await api.call('GET', '/api/auth/user', { token: user.token })).body.data.email_confirmed_at).toBeNull();
    await page.getByRole('button', { name: 'Confirm my address' }).click();
    await expect.poll(() => page.locator('#status').textContent(), PATIENCE).toBe(`Your address ${user.email} is confirmed.`);
    expect((await api.call('GET', '/api/auth/user', { token: user.token })).body.data.email_confirmed_at).toEqual(expect.any(String));
  });

  it('reset: recover, open the mailed link, set a new password; it signs in and the old one does not', async () => {
    const user = await signUp(api, 'reset');
    expect((await api.call('POST', '/api/auth/recover', { json: { email: user.email } })).status).toBe(200);
    const link = await linkMailedTo(user.email, /Reset/u);
    expect(link).toMatch(/\/reset\?token=/u);
    const { page } = await open(link);
    await page.screenshot({ path: join(shots, 'page-reset.png'), fullPage: true });
    const fresh = 'a brand new passphrase for roster';
    await page.getByLabel('New password', { exact: true }).fill(fresh);
    await page.getByLabel('New password again').fill(fresh);
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await expect
      .poll(() => page.locator('#status').textContent(), PATIENCE)
      .toBe(`Your new password is set, and you are signed in as ${user.email}.`);
    expect((await api.call('POST', '/api/auth/signin', { json: { email: user.email, password: fresh } })).status).toBe(200);
    expect((await api.call('POST', '/api/auth/signin', { json: { email: user.email, password: PASSWORD } })).status).toBe(401);
  });

  it("invite, signed in with an unconfirmed account: the API's 403 message, and the button that mails the confirmation again", async () => {
    const owner = await signUp(api, 'owner');
    const invitee = await signUp(api, 'unconfirmed', { confirmed: false });
    const team = await createTeam(api, owner);
    expect(
      (await api.call('POST', `/api/teams/${team.slug}/invites`, { token: owner.token, json: { email: invitee.email, role: 'MEMBER' } }))
        .status,
    ).toBe(201);
    const link = await linkMailedTo(invitee.email, /invited you/u);
    // This visit answers 403 on purpose: only a 5xx counts against it.
    const visit = await openPage(browser, link, 500);
    const { page } = visit;
    await page.locator('#signin-password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Accept' }).click();
    await expect
      .poll(() => page.locator('#status').textContent(), PATIENCE)
      .toBe('Confirm your e-mail address first: follow the link in the e-mail Roster sent you.');
    const confirmations = () => inbox.filter((m) => m.to.includes(invitee.email) && /Confirm your e-mail/u.test(m.subject)).length;
    await expect.poll(confirmations, PATIENCE).toBe(1); // the sign-up's
    await page.getByRole('button', { name: 'Send the confirmation e-mail again' }).click();
    await expect.poll(() => page.locator('#status').textContent(), PATIENCE).toMatch(/^A confirmation e-mail is on its way/u);
    await expect.poll(confirmations, PATIENCE).toBe(2);
    expect(unclean(visit, origin)).toEqual([]);
    expect((await api.call('GET', `/api/teams/${team.slug}/members`, { token: owner.token })).body.data).toHaveLength(1);
  });

  // Last, so they cover everything the tests above made the pages do.
  it('asked nothing of any host but Roster, and logged no error, CSP violation or failed request', async ({ annotate }) => {
    expect(visits).toHaveLength(3);
    expect(visits.flatMap((visit) => unclean(visit, origin))).toEqual([]);
    const paths = visits.flatMap((visit) => visit.requests.map((url) => new URL(url).pathname));
    expect(paths).toEqual(
      expect.arrayContaining(['/assets/page.js', '/assets/page.css', '/api/auth/signup', '/api/auth/verify', '/api/auth/reset']),
    );
    await annotate(`screenshots: ${shots}`);
  });
});
