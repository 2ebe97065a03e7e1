import type { Caller } from '../caller.js';
import { paginate, toPage } from '../pagination.js';
import {
  type BodyOf,
  type Page,
  type PageQuery,
  type WebhookEndpoint,
  type WebhookEndpointCreated,
  type WriteOptions,
  idempotencyHeader,
} from '../types.js';

/** A team's webhook endpoints, for its OWNERs and ADMINs. */
export const webhooksResource = ({ api, call }: Caller) => {
  /** One page of the team's endpoints, in creation order, without their secrets. */
  const list = async (slug: string, query: PageQuery = {}): Promise<Page<WebhookEndpoint>> =>
    toPage(await call((headers) => api.GET('/api/teams/{slug}/webhooks', { headers, params: { path: { slug }, query } })));

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
  };
};

export type WebhooksResource = ReturnType<typeof webhooksResource>;
