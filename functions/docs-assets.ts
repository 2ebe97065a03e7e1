import { DOCS_SECURITY_HEADERS, docsAsset } from '#lib/http/docs.ts';
import { staticEndpoint } from '#lib/http/static.ts';

/** GET /docs/{asset}: Swagger UI's files and the script that starts it. */
export const handler = staticEndpoint('docs-assets', (event) => ({
  ...docsAsset(event.pathParameters?.asset ?? ''),
  headers: DOCS_SECURITY_HEADERS,
}));
