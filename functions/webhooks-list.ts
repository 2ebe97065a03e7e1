import { db } from '#lib/db/service.ts';
import { listWebhookEndpoints } from '#lib/events/webhooks/endpoints.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { pageRequest } from '#lib/wire/schemas.ts';

export const handler = endpoint('webhooks-list', ({ actor, params, query }) =>
  listWebhookEndpoints(db(), actor, params.slug, pageRequest(query)),
);
