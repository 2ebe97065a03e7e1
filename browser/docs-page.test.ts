import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { type DocsVisit, launchChromium, openDocs } from '#scripts/docs-screenshot.ts';
import { useApi } from '#test/helpers/api.ts';

/**
 * GET /docs rendered for real: Swagger UI in headless Chromium, against the local server, under
 * the page's own policy. No Chromium is a failure, not a skip: this file exists to run it.
 */
interface Operation {
  summary: string;
  parameters?: { name: string }[];
  responses: Record<string, unknown>;
}
interface Spec {
  info: { title: string };
  tags: { name: string }[];
  paths: Record<string, Record<string, Operation>>;
}
const spec = JSON.parse(readFileSync(new URL('../openapi.json', import.meta.url), 'utf8')) as Spec;
const operations = Object.values(spec.paths).flatMap((byMethod) => Object.values(byMethod));

const api = useApi();
let browser: Browser | undefined;
let opened: Promise<DocsVisit> | undefined;
/** The page, opened once by the first test; without Chromium every test fails with how to install it. */
const docs = (): Promise<DocsVisit> =>
  (opened ??= launchChromium().then((launched) => {
    browser = launched;
    return openDocs(launched, api.url);
  }));
afterAll(() => browser?.close());

describe('GET /docs in Chromium', () => {
  it('renders the document: its title, every tag and every operation', async () => {
    const { page } = await docs();
    expect(await page.title()).toBe(spec.info.title);
    expect(await page.locator('.info .title').textContent()).toContain(spec.info.title);
    const tags = await page.locator('.opblock-tag').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-tag')));
    expect(tags).toEqual(spec.tags.map((tag) => tag.name));
    expect((await page.locator('.opblock-summary-description').allTextContents()).sort()).toEqual(
      operations.map((operation) => operation.summary).sort(),
    );
    for (const summary of ['Sign up', 'Create a team']) {
      expect(await page.locator('.opblock-summary-description', { hasText: summary }).first().isVisible()).toBe(true);
    }
  });

  it('takes a screenshot of the first viewport', async ({ annotate }) => {
    const path = join(mkdtempSync(join(tmpdir(), 'roster-docs-page-')), 'docs-page.png');
    const png = await (await docs()).page.screenshot({ path });
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    await annotate(`screenshot: ${path}`);
  });

  it('expanding an operation shows its parameters and responses', async () => {
    const { page } = await docs();
    const members = spec.paths['/api/teams/{slug}/members']?.get as Operation;
    const operation = page.locator('.opblock', { has: page.locator('.opblock-summary-description', { hasText: members.summary }) });
    await operation.locator('.opblock-summary-control').click();
    const body = operation.locator('.opblock-body');
    await body.waitFor();
    const parameters = await body
      .locator('tr[data-param-name]')
      .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-param-name')));
    expect(parameters).toEqual(members.parameters?.map((parameter) => parameter.name));
    const codes = await body.locator('tr.response[data-code]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-code')));
    expect(codes).toEqual(Object.keys(members.responses));
  });

  // Last, so they cover everything the tests above made the page do.
  it('asked nothing of any host but Roster', async () => {
    const { requests } = await docs();
    const origin = new URL(api.url).origin;
    expect(requests.filter((url) => new URL(url).origin !== origin)).toEqual([]);
    const paths = requests.map((url) => new URL(url).pathname);
    expect(paths).toEqual(
      expect.arrayContaining(['/docs', '/docs/swagger-ui-bundle.js', '/docs/swagger-ui.css', '/docs/start.js', '/api/openapi.json']),
    );
  });

  it('logged no console error, uncaught exception, CSP violation or failed request', async () => {
    expect((await docs()).problems).toEqual([]);
  });
});
