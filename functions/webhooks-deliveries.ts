import { db } from '#lib/db/service.ts';
import { listDeliveries } from '#lib/events/webhooks/deliveries.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { pageRequest } from '#lib/wire/schemas.ts';

export const handler = endpoint('webhooks-deliveries', ({ actor, params, query }) =>
  listDeliveries(db(), actor, params.slug, params.id, pageRequest(query)),
);
