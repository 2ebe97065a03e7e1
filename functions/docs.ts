import { DOCS_PAGE, DOCS_SECURITY_HEADERS } from '#lib/http/docs.ts';
import { staticEndpoint } from '#lib/http/static.ts';

/** GET /docs: the API reference page. */
export const handler = staticEndpoint('docs', () => ({
  body: DOCS_PAGE,
  contentType: 'text/html; charset=utf-8',
  headers: DOCS_SECURITY_HEADERS,
}));
