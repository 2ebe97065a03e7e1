import { db } from '#lib/db/service.ts';
import { staticEndpoint } from '#lib/http/static.ts';
import { unsubscribeGet } from '#lib/teams/invites/unsubscribe.ts';

/** GET /unsubscribe?token=…: the page an invitation's or nomination's "no more" link opens. */
export const handler = staticEndpoint('page-unsubscribe', (event) => unsubscribeGet(db(), event.queryStringParameters?.token, new Date()));
