import { staticEndpoint } from '#lib/http/static.ts';
import { pageAsset } from '#lib/pages/render.ts';

/** GET /assets/{asset}: the pages' script and style sheet. */
export const handler = staticEndpoint('page-assets', (event) => pageAsset(event.pathParameters?.asset ?? ''));
