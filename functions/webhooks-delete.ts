import { db } from '#lib/db/service.ts';
import { deleteWebhookEndpoint } from '#lib/events/webhooks/endpoints.ts';
import { endpoint } from '#lib/http/endpoint.ts';

export const handler = endpoint('webhooks-delete', ({ actor, params, now }) =>
  deleteWebhookEndpoint(db(), actor, params.slug, params.id, now),
);
