import { staticEndpoint } from '#lib/http/static.ts';
import { verifyPage } from '#lib/pages/link-pages.ts';

/** GET /verify?token=…: the page a confirmation e-mail links to. */
export const handler = staticEndpoint('page-verify', (event) => verifyPage(event.queryStringParameters?.token));
