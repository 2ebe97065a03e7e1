/**
 * `npm run docs:screenshot`: renders GET /docs in headless Chromium against a local server on
 * PORT (3000) and an in-memory DynamoDB Local, and writes docs/images/docs-page.png for the README.
 * It writes nothing for a page that logged errors or asked anything of another host. Its helpers
 * serve the browser test too (browser/docs-page.test.ts).
 */
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { ensureTable, startDynamoDbLocal } from '#infra/dynamodb-local.ts';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const VIEWPORT = { width: 1280, height: 900 };
export const OUTPUT = fileURLToPath(new URL('../docs/images/docs-page.png', import.meta.url));

/**
 * Flags for a machine without internet: nothing in the background (updates, sync, QUIC probes)
 * reaches out, so every request the page makes is one the page asked for. Playwright gives each
 * launch a fresh profile of its own and removes it on close.
 */
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Debian's Chromium (or CHROMIUM_PATH); a missing one is an error that says how to install it. */
export const launchChromium = (): Promise<Browser> => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: install it (apt-get install -y chromium) or set CHROMIUM_PATH`);
  }
  return chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
};

export interface DocsVisit {
  page: Page;
  /** Every URL the page requested, in order. */
  requests: string[];
  /** Console errors, uncaught exceptions, CSP violations, and failed or non-2xx requests. */
  problems: string[];
}

/** Opens `${baseUrl}/docs` and waits until Swagger UI has rendered the operations. */
export const openDocs = async (browser: Browser, baseUrl: string): Promise<DocsVisit> => {
  const page = await browser.newPage({ viewport: VIEWPORT });
  const visit: DocsVisit = { page, requests: [], problems: [] };
  page.on('request', (request) => visit.requests.push(request.url()));
  page.on('requestfailed', (request) => visit.problems.push(`request failed: ${request.url()} (${request.failure()?.errorText})`));
  page.on('response', (response) => {
    if (response.status() >= 300) visit.problems.push(`HTTP ${response.status()}: ${response.url()}`);
  });
  page.on('console', (message) => {
    if (message.type() === 'error') visit.problems.push(`console: ${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => visit.problems.push(`uncaught: ${error.message}`));
  // Heard in the page itself, so a violation counts even if Chromium stops logging it to the console.
  await page.exposeFunction('reportCspViolation', (text: string) => visit.problems.push(`CSP: ${text}`));
  await page.addInitScript(
    "document.addEventListener('securitypolicyviolation', (e) => reportCspViolation(e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline')));",
  );
  await page.goto(new URL('/docs', baseUrl).href, { waitUntil: 'networkidle' });
  await page.locator('.opblock').first().waitFor();
  return visit;
};

/**
 * What a picture needs before the server starts: Chromium, and DynamoDB Local with a fresh table
 * and data directory named after `name`, in the environment the handlers read when they load.
 * Each step's undo goes onto `undo` (run in reverse however the script ends).
 */
export const throwawayRoster = async (name: string, undo: (() => unknown)[]): Promise<Browser> => {
  const browser = await launchChromium();
  undo.push(() => browser.close());
  const dynamo = await startDynamoDbLocal();
  undo.push(() => dynamo.stop());
  process.env.DYNAMODB_ENDPOINT = dynamo.endpoint;
  process.env.TABLE_NAME = `roster-${name}`;
  process.env.DATA_DIR = mkdtempSync(join(tmpdir(), `roster-${name}-`));
  await ensureTable(dynamo.endpoint, process.env.TABLE_NAME);
  return browser;
};

if (import.meta.main) {
  // Undone in reverse however the script ends: a browser, DynamoDB Local or server left running keeps it alive.
  const undo: (() => unknown)[] = [];
  try {
    const browser = await throwawayRoster('docs', undo);
    // Imported only now: the handlers read the environment when they load.
    const { startLocalServer } = await import('#lib/http/server.ts');
    // npm start's port, so the picture shows the URL a reader gets (and stays the same from run to run).
    const server = await startLocalServer(Number(process.env.PORT ?? 3000));
    undo.push(() => server.close());

    const { page, requests, problems } = await openDocs(browser, server.url);
    const foreign = requests.filter((url) => new URL(url).origin !== server.url).map((url) => `request beyond Roster: ${url}`);
    if (problems.length > 0 || foreign.length > 0)
      throw new Error(`the page is not clean, no screenshot written:\n${[...problems, ...foreign].join('\n')}`);
    mkdirSync(dirname(OUTPUT), { recursive: true });
    await page.screenshot({ path: OUTPUT });
    console.log(`wrote ${OUTPUT}`);
  } finally {
    for (const step of undo.reverse()) await step();
  }
}
