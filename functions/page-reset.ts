import { staticEndpoint } from '#lib/http/static.ts';
import { resetPage } from '#lib/pages/link-pages.ts';

/** GET /reset?token=…: the page a password reset e-mail links to. */
export const handler = staticEndpoint('page-reset', (event) => resetPage(event.queryStringParameters?.token));
