import type { Caller } from '../caller.js';
import { paginate, toPage } from '../pagination.js';
import {
  type BodyOf,
  type BulkInviteResult,
  type Invite,
  type Page,
  type PageQuery,
  type WriteOptions,
  idempotencyHeader,
} from '../types.js';

/** A team's invitations, as its OWNERs and ADMINs manage them. */
export const invitesResource = ({ api, call }: Caller) => {
  /** One page of the team's pending invites. */
  const list = async (slug: string, query: PageQuery = {}): Promise<Page<Invite>> =>
    toPage(await call((headers) => api.GET('/api/teams/{slug}/invites', { headers, params: { path: { slug }, query } })));

  return {
    list,
    all: (slug: string, query: PageQuery = {}): AsyncGenerator<Invite> => paginate((q) => list(slug, q), query),

    /** Invites an e-mail address (again: the pending invite is renewed and sent again). */
    async create(slug: string, body: BodyOf<'invites-create'>, options?: WriteOptions): Promise<void> {
      await call((headers) =>
        api.POST('/api/teams/{slug}/invites', { headers, params: { path: { slug }, ...idempotencyHeader(options) }, body }),
      );
    },

    /**
     * Invites 1 to 100 addresses, each row as `create` would (its own rules, mail allowance and
     * transaction): one result per row, in order, each succeeding (`status` 201) or failing on its own.
     * Throws only when the whole request is refused (403, 404, 422 on the list itself).
     */
    async bulk(slug: string, invites: BodyOf<'invites-create'>[], options?: WriteOptions): Promise<BulkInviteResult[]> {
      const path = { slug };
      return (
        await call((headers) =>
          api.POST('/api/teams/{slug}/invites/bulk', { headers, params: { path, ...idempotencyHeader(options) }, body: { invites } }),
        )
      ).data.data;
    },

    async get(slug: string, id: number): Promise<Invite> {
      return (await call((headers) => api.GET('/api/teams/{slug}/invites/{id}', { headers, params: { path: { slug, id } } }))).data.data;
    },

    /** Sends the invite again with a fresh expiry. */
    async resend(slug: string, id: number, options?: WriteOptions): Promise<void> {
      await call((headers) =>
        api.POST('/api/teams/{slug}/invites/{id}/resend', { headers, params: { path: { slug, id }, ...idempotencyHeader(options) } }),
      );
    },

    /** Revokes the invite. */
    async delete(slug: string, id: number): Promise<void> {
      await call((headers) => api.DELETE('/api/teams/{slug}/invites/{id}', { headers, params: { path: { slug, id } } }));
    },
  };
};

export type InvitesResource = ReturnType<typeof invitesResource>;
