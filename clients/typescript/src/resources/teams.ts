import type { Caller } from '../caller.js';
import { paginate, toPage } from '../pagination.js';
import { type BodyOf, type Page, type PageQuery, type Team, type WriteOptions, idempotencyHeader } from '../types.js';

export const teamsResource = ({ api, call }: Caller) => {
  /** One page of the caller's teams, in the order they joined them. */
  const list = async (query: PageQuery = {}): Promise<Page<Team>> =>
    toPage(await call((headers) => api.GET('/api/teams', { headers, params: { query } })));

  return {
    list,
    /** Every team of the caller: `for await (const team of client.teams.all())`. */
    all: (query: PageQuery = {}): AsyncGenerator<Team> => paginate(list, query),

    /** The caller becomes its OWNER. */
    async create(body: BodyOf<'teams-create'>, options?: WriteOptions): Promise<Team> {
      return (await call((headers) => api.POST('/api/teams', { headers, params: idempotencyHeader(options), body }))).data.data;
    },

    async get(slug: string): Promise<Team> {
      return (await call((headers) => api.GET('/api/teams/{slug}', { headers, params: { path: { slug } } }))).data.data;
    },

    /** Renames the team and may change its slug (both are required). */
    async update(slug: string, body: BodyOf<'teams-update'>): Promise<Team> {
      return (await call((headers) => api.PUT('/api/teams/{slug}', { headers, params: { path: { slug } }, body }))).data.data;
    },

    /** OWNER only; its members and invites go with it. */
    async delete(slug: string): Promise<void> {
      await call((headers) => api.DELETE('/api/teams/{slug}', { headers, params: { path: { slug } } }));
    },
  };
};

export type TeamsResource = ReturnType<typeof teamsResource>;
