import { db } from '#lib/db/service.ts';
import { staticEndpoint } from '#lib/http/static.ts';
import { invitePage } from '#lib/pages/invite-page.ts';

/** GET /invites/{uuid}?token=…: the page an invitation e-mail links to. */
export const handler = staticEndpoint('page-invite', (event) =>
  invitePage(db(), event.pathParameters?.uuid, event.queryStringParameters?.token, new Date()),
);
