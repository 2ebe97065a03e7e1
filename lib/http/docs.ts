import { AppError } from '#lib/core/errors.ts';
import { readShipped } from '#lib/core/shipped.ts';
import { routeNamed } from './routes.ts';

/**
 * GET /docs: openapi.json rendered by Swagger UI. Its files come from the swagger-ui-dist package,
 * shipped beside the docs-assets function (the route's `files`), so the page needs nothing beyond
 * Roster itself.
 */
// The files the stack ships beside the function (its route's `files`), by name.
const SHIPPED = new Map((routeNamed('docs-assets').files ?? []).map((path) => [path.slice(path.lastIndexOf('/') + 1), path]));

/** Starts Swagger UI on our document; a file of its own, so the page's policy allows no inline script. */
const START_SCRIPT = `window.ui = SwaggerUIBundle({
  url: new URL('../api/openapi.json', document.baseURI).href,
  dom_id: '#swagger-ui',
  deepLinking: true,
  tryItOutEnabled: false,
  persistAuthorization: false,
});
`;

/** The page. Its `data:,` icon keeps the browser from asking for /favicon.ico, a 404 in the console. */
export const DOCS_PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Roster API</title>
    <link rel="icon" href="data:,">
    <base href="/docs/">
    <link rel="stylesheet" href="swagger-ui.css">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="swagger-ui-bundle.js"></script>
    <script src="start.js"></script>
  </body>
</html>
`;

/**
 * Only our own origin: scripts from files (no inline, no eval), styles that Swagger UI sets inline,
 * its embedded SVG icons, and requests to this API (for "Try it out").
 */
export const DOCS_SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self' data:; base-uri 'self'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  // Assets change only with a deployment; an hour of caching spares the function.
  'cache-control': 'public, max-age=3600',
};

const TYPES: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' };

const cache = new Map<string, string>();

/** One file of the page, by name; any other name is 404. Read once per process. */
export const docsAsset = (name: string): { body: string; contentType: string } => {
  const contentType = TYPES[name.split('.').pop() ?? ''];
  if (name === 'start.js') return { body: START_SCRIPT, contentType: TYPES.js as string };
  const path = SHIPPED.get(name);
  if (!contentType || !path) throw new AppError('not_found', 'No such file.');
  let body = cache.get(name);
  if (body === undefined) {
    body = readShipped(path);
    cache.set(name, body);
  }
  return { body, contentType };
};
