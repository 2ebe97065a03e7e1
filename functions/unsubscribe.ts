import { db } from '#lib/db/service.ts';
import { formFields } from '#lib/http/form-body.ts';
import { staticEndpoint } from '#lib/http/static.ts';
import { unsubscribePost } from '#lib/teams/invites/unsubscribe.ts';

/** POST /unsubscribe?token=…: the page's buttons and a mail client's one-click POST (RFC 8058). */
export const handler = staticEndpoint('unsubscribe', (event) =>
  unsubscribePost(db(), event.queryStringParameters?.token, formFields(event), new Date()),
);
