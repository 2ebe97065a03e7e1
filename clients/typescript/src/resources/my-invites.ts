import type { Caller } from '../caller.js';
import { paginate, toPage } from '../pagination.js';
import { type Invite, type Page, type PageQuery, type WriteOptions, idempotencyHeader } from '../types.js';

/** Invitations addressed to the signed-in user's e-mail, by their `uuid`. */
export const myInvitesResource = ({ api, call }: Caller) => {
  /** One page of the pending, unexpired invites addressed to the caller. */
  const list = async (query: PageQuery = {}): Promise<Page<Invite>> =>
    toPage(await call((headers) => api.GET('/api/invites', { headers, params: { query } })));

  return {
    list,
    all: (query: PageQuery = {}): AsyncGenerator<Invite> => paginate(list, query),

    async get(uuid: string): Promise<Invite> {
      return (await call((headers) => api.GET('/api/invites/{uuid}', { headers, params: { path: { uuid } } }))).data.data;
    },

    /** Joins the team with the invite's role. */
    async accept(uuid: string, options?: WriteOptions): Promise<void> {
      await call((headers) =>
        api.POST('/api/invites/{uuid}/accept', { headers, params: { path: { uuid }, ...idempotencyHeader(options) } }),
      );
    },

    async decline(uuid: string, options?: WriteOptions): Promise<void> {
      await call((headers) =>
        api.POST('/api/invites/{uuid}/decline', { headers, params: { path: { uuid }, ...idempotencyHeader(options) } }),
      );
    },
  };
};

export type MyInvitesResource = ReturnType<typeof myInvitesResource>;
