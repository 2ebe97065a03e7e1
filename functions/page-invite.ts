import { db } from '../lib/db/service.ts';
import { pathParams } from '../lib/http/params.ts';
import { staticEndpoint } from '../lib/http/static.ts';
import { invitePage } from '../lib/pages/pages.ts';

/** GET /invites/{uuid}?token=…: the page an invitation e-mail links to. A malformed UUID gets the same page as an unknown one. */
export const handler = staticEndpoint('page-invite', (event) => {
  let uuid: string | null;
  try {
    uuid = pathParams(event.pathParameters).uuid;
  } catch {
    uuid = null;
  }
  return invitePage(db(), uuid, event.queryStringParameters?.token, new Date());
});
