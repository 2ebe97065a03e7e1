import { staticEndpoint } from '#lib/http/static.ts';
import document from '../openapi.json' with { type: 'json' };

/** GET /api/openapi.json: the generated document (`npm run openapi`), bundled with the function. */
const body = JSON.stringify(document);

export const handler = staticEndpoint('openapi', () => ({
  body,
  contentType: 'application/json; charset=utf-8',
  headers: { 'cache-control': 'public, max-age=300' },
}));
