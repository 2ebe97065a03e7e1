/**
 * `npm run pages:screenshots`: renders the three pages behind mailed links (lib/pages/) in headless
 * Chromium against a local server (on PORT, else any free port) and an in-memory DynamoDB Local, and writes
 * docs/images/page-invite.png, page-verify.png and page-reset.png for the README. The links'
 * tokens are made as the mailer makes them (issueToken); no mail is sent. Nothing is written for a
 * page that logged errors or asked anything of another host. Its helpers serve the browser test
 * too (browser/pages.test.ts).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { throwawayRoster } from './docs-screenshot.ts';

export const IMAGES = fileURLToPath(new URL('../docs/images/', import.meta.url));
/** A laptop-sized window: the pages are one narrow column. */
const VIEWPORT = { width: 960, height: 720 };

export interface PageVisit {
  page: Page;
  /** Every URL the page requested, in order. */
  requests: string[];
  /** Console errors, uncaught exceptions, CSP violations, failed requests and answers of `failingStatus` or more. */
  problems: string[];
}

/**
 * Opens `url` in a fresh page of its own and records what went wrong. `failingStatus`: the
 * lowest HTTP status counted as a problem (a test that expects a 4xx raises it).
 */
export const openPage = async (browser: Browser, url: string, failingStatus = 300): Promise<PageVisit> => {
  const page = await browser.newPage({ viewport: VIEWPORT });
  const visit: PageVisit = { page, requests: [], problems: [] };
  page.on('request', (request) => visit.requests.push(request.url()));
  page.on('requestfailed', (request) => visit.problems.push(`request failed: ${request.url()} (${request.failure()?.errorText})`));
  page.on('response', (response) => {
    if (response.status() >= failingStatus) visit.problems.push(`HTTP ${response.status()}: ${response.url()}`);
  });
  page.on('console', (message) => {
    // Chromium logs every non-2xx fetch as a console error; those are judged by status above.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) {
      visit.problems.push(`console: ${message.text()} (${message.location().url})`);
    }
  });
  page.on('pageerror', (error) => visit.problems.push(`uncaught: ${error.message}`));
  await page.exposeFunction('reportCspViolation', (text: string) => visit.problems.push(`CSP: ${text}`));
  await page.addInitScript(
    "document.addEventListener('securitypolicyviolation', (e) => reportCspViolation(e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline')));",
  );
  await page.goto(url, { waitUntil: 'networkidle' });
  return visit;
};

/** The problems of `visit`, and every request it made beyond `origin`. */
export const unclean = (visit: PageVisit, origin: string): string[] => [
  ...visit.problems,
  ...visit.requests.filter((url) => new URL(url).origin !== origin).map((url) => `request beyond Roster: ${url}`),
];

if (import.meta.main) {
  // Undone in reverse however the script ends: a browser, DynamoDB Local or server left running keeps it alive.
  const undo: (() => unknown)[] = [];
  try {
    const browser = await throwawayRoster('pages', undo);
    // Imported only now: the handlers read the environment when they load.
    const { startLocalServer } = await import('#lib/http/server.ts');
    const { issueToken } = await import('#lib/auth/account-tokens.ts');
    const { db } = await import('#lib/db/service.ts');
    // No address shows in the pictures: any free port will do.
    const server = await startLocalServer(Number(process.env.PORT ?? 0));
    undo.push(() => server.close());

    const call = async (path: string, body: unknown, token?: string) => {
      const res = await fetch(`${server.url}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Token ${token}` } : {}) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      // Only the session of a sign-up is read from what comes back.
      const json = (await res.json()) as { data: { session: { access_token: string; user: { id: string } } } };
      if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
      return json.data;
    };
    const signUp = async (email: string, firstName: string, lastName: string) => {
      const { session } = await call('/api/auth/signup', { email, password: 'correct horse battery staple', firstName, lastName });
      const token = await issueToken(db(), { purpose: 'verification', email, user: { userUuid: session.user.id } }, new Date());
      return { session, token };
    };

    const ada = await signUp('ada@example.com', 'Ada', 'Lovelace');
    await call('/api/auth/verify', { token: ada.token });
    await call('/api/teams', { name: 'Analytical Engines', slug: 'analytical-engines' }, ada.session.access_token);
    await call('/api/teams/analytical-engines/invites', { email: 'grace@example.com', role: 'ADMIN' }, ada.session.access_token);
    const invites = (await fetch(`${server.url}/api/teams/analytical-engines/invites`, {
      headers: { authorization: `Token ${ada.session.access_token}` },
    }).then((res) => res.json())) as { data: { uuid: string; expiresAt: string }[] };
    const invite = invites.data[0] as { uuid: string; expiresAt: string };
    const inviteToken = await issueToken(
      db(),
      { purpose: 'invitation', email: 'grace@example.com', inviteUuid: invite.uuid, expiresAt: invite.expiresAt },
      new Date(),
    );
    const alan = await signUp('alan@example.com', 'Alan', 'Turing');
    const recovery = await issueToken(
      db(),
      { purpose: 'recovery', email: 'ada@example.com', user: { userUuid: ada.session.user.id } },
      new Date(),
    );

    const shots = [
      { name: 'page-invite.png', path: `/invites/${invite.uuid}?token=${encodeURIComponent(inviteToken)}` },
      { name: 'page-verify.png', path: `/verify?token=${encodeURIComponent(alan.token)}` },
      { name: 'page-reset.png', path: `/reset?token=${encodeURIComponent(recovery)}` },
    ];
    mkdirSync(IMAGES, { recursive: true });
    for (const { name, path } of shots) {
      const visit = await openPage(browser, `${server.url}${path}`);
      const problems = unclean(visit, server.url);
      if (problems.length > 0) throw new Error(`${path} is not clean, no screenshot written:\n${problems.join('\n')}`);
      await visit.page.screenshot({ path: join(IMAGES, name), fullPage: true });
      console.log(`wrote ${join(IMAGES, name)}`);
    }
  } finally {
    for (const step of undo.reverse()) await step();
  }
}
