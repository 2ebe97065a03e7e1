import { db } from '#lib/db/service.ts';
import { replayDelivery } from '#lib/events/webhooks/deliveries.ts';
import { endpoint } from '#lib/http/endpoint.ts';

export const handler = endpoint('webhooks-replay', ({ actor, params, now }) =>
  replayDelivery(db(), actor, params.slug, params.id, params.deliveryId, now),
);
