import { db } from '#lib/db/service.ts';
import { createWebhookEndpoint } from '#lib/events/webhooks/endpoints.ts';
import { endpoint } from '#lib/http/endpoint.ts';

export const handler = endpoint('webhooks-create', ({ actor, params, body, now }) =>
  createWebhookEndpoint(db(), actor, params.slug, body, now),
);
