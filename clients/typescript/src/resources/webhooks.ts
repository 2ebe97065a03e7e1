import type { Caller } from '../caller.js';
import { paginate, toPage } from '../pagination.js';
import {
  type BodyOf,
  type Page,
  type PageQuery,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEndpointCreated,
  type WebhookReplay,
  type WriteOptions,
  idempotencyHeader,
} from '../types.js';

/** A team's webhook endpoints, for its OWNERs and ADMINs. */
export const webhooksResource = ({ api, call }: Caller) => {
  /** One page of the team's endpoints, in creation order, without their secrets. */
  const list = async (slug: string, query: PageQuery = {}): Promise<Page<WebhookEndpoint>> =>
    toPage(await call((headers) => api.GET('/api/teams/{slug}/webhooks', { headers, params: { path: { slug }, query } })));

  /**
   * One page of an endpoint's delivery log, newest first (kept 30 days): one row per attempt, with
   * the receiver's status or the error and when the next attempt is due. 404 for another team's endpoint.
   */
  const deliveries = async (slug: string, endpointId: number, query: PageQuery = {}): Promise<Page<WebhookDelivery>> => {
    const path = { slug, id: endpointId };
    return toPage(await call((headers) => api.GET('/api/teams/{slug}/webhooks/{id}/deliveries', { headers, params: { path, query } })));
  };

  return {
    list,
    all: (slug: string, query: PageQuery = {}): AsyncGenerator<WebhookEndpoint> => paginate((q) => list(slug, q), query),

    /**
     * Registers an https `url` on public addresses (422 on `url` otherwise; at most 10 a team) for
     * the audit `events` named. The answer's `secret` is shown this once: keep it to verify
     * `webhook-signature`.
     */
    async create(slug: string, body: BodyOf<'webhooks-create'>, options?: WriteOptions): Promise<WebhookEndpointCreated> {
      return (
        await call((headers) =>
          api.POST('/api/teams/{slug}/webhooks', { headers, params: { path: { slug }, ...idempotencyHeader(options) }, body }),
        )
      ).data.data;
    },

    /** Nothing more is sent to it; its secret goes with it. */
    async delete(slug: string, id: number): Promise<void> {
      await call((headers) => api.DELETE('/api/teams/{slug}/webhooks/{id}', { headers, params: { path: { slug, id } } }));
    },

    deliveries,
    /** Every attempt of the endpoint's delivery log, newest first. */
    allDeliveries: (slug: string, endpointId: number, query: PageQuery = {}): AsyncGenerator<WebhookDelivery> =>
      paginate((q) => deliveries(slug, endpointId, q), query),

    /**
     * Queues the event of a logged delivery to the endpoint again (queued, not yet sent): same
     * `eventId` (the message's `webhook-id`, for the receiver to de-duplicate), a fresh signature,
     * its attempts logged with `replay: true`. 404 once the event is past the audit log's retention.
     */
    async replay(slug: string, endpointId: number, deliveryId: string, options?: WriteOptions): Promise<WebhookReplay> {
      const path = { slug, id: endpointId, deliveryId };
      return (
        await call((headers) =>
          api.POST('/api/teams/{slug}/webhooks/{id}/deliveries/{deliveryId}/replay', {
            headers,
            params: { path, ...idempotencyHeader(options) },
          }),
        )
      ).data.data;
    },
  };
};

export type WebhooksResource = ReturnType<typeof webhooksResource>;
