import { AppError } from '#lib/core/errors.ts';
import { readShipped } from '#lib/core/shipped.ts';
import { routeNamed } from '#lib/http/routes.ts';
import type { StaticAnswer } from '#lib/http/static.ts';
import { escapeHtml } from '#lib/mail/safety.ts';

/**
 * The pages behind the links Roster mails (docs/pages.md): server-rendered HTML, one script and one
 * style sheet of our own (GET /assets/{asset}), nothing from any other host.
 */

/**
 * A page carries a mailed token in its URL: no Referer may take it elsewhere, no cache may keep
 * it, and nothing but our own files may run or be fetched. No inline script or style at all.
 */
export const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'; img-src 'self'";

export const PAGE_HEADERS = {
  'content-security-policy': PAGE_CSP,
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

/** The assets hold no secret and change only with a deployment: an hour of caching spares the function. */
const ASSET_HEADERS = { ...PAGE_HEADERS, 'cache-control': 'public, max-age=3600' };

/** HTML escaping for text and attribute values alike (quotes included). */
export const html = escapeHtml;

export interface PageContent {
  title: string;
  /** Markup of <main>, every interpolated value already escaped. */
  main: string;
  /** `data-*` attributes of <main> for the script (values escaped here). */
  data?: Record<string, string>;
}

/** The whole document. Its own icon keeps the browser from asking for /favicon.ico (a 404). */
export const renderPage = ({ title, main, data = {} }: PageContent): StaticAnswer => {
  const attributes = Object.entries(data)
    .map(([name, value]) => ` data-${name}="${html(value)}"`)
    .join('');
  const body = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="referrer" content="no-referrer">
    <meta name="robots" content="noindex">
    <title>${html(title)} · Roster</title>
    <link rel="icon" href="/assets/icon.svg" type="image/svg+xml">
    <link rel="stylesheet" href="/assets/page.css">
    <script src="/assets/page.js" defer></script>
  </head>
  <body>
    <main${attributes}>
      <p class="brand">Roster</p>
      <h1>${html(title)}</h1>
${main}
      <p id="status" role="status" aria-live="polite"></p>
    </main>
  </body>
</html>
`;
  return { body, contentType: 'text/html; charset=utf-8', headers: PAGE_HEADERS };
};

// The files the stack ships beside the page-assets function (its route's `files`), by name.
const SHIPPED = new Map((routeNamed('page-assets').files ?? []).map((path) => [path.slice(path.lastIndexOf('/') + 1), path]));
const TYPES: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', svg: 'image/svg+xml' };
const cache = new Map<string, string>();

/** One asset of the pages, by name; any other name is 404. Read once per process. */
export const pageAsset = (name: string): StaticAnswer => {
  const path = SHIPPED.get(name);
  const contentType = TYPES[name.split('.').pop() ?? ''];
  if (!path || !contentType) throw new AppError('not_found', 'No such file.');
  let body = cache.get(name);
  if (body === undefined) {
    body = readShipped(path);
    cache.set(name, body);
  }
  return { body, contentType, headers: ASSET_HEADERS };
};
