import type { Caller } from '../caller.js';
import { paginate, toPage } from '../pagination.js';
import type { Member, Membership, Page, PageQuery, Role } from '../types.js';

export const membersResource = ({ api, call }: Caller) => {
  /** One page of a team's members, in join order. */
  const list = async (slug: string, query: PageQuery = {}): Promise<Page<Member>> =>
    toPage(await call((headers) => api.GET('/api/teams/{slug}/members', { headers, params: { path: { slug }, query } })));

  return {
    list,
    all: (slug: string, query: PageQuery = {}): AsyncGenerator<Member> => paginate((q) => list(slug, q), query),

    /** `memberId` is the member's `id` (the membership), not their `userId`. */
    async updateRole(slug: string, memberId: number, role: Role): Promise<Membership> {
      const path = { slug, memberId };
      return (await call((headers) => api.PUT('/api/teams/{slug}/members/{memberId}', { headers, params: { path }, body: { role } }))).data
        .data;
    },

    /** Removes a member; a MEMBER may remove only themselves (leave). */
    async remove(slug: string, memberId: number): Promise<void> {
      const path = { slug, memberId };
      await call((headers) => api.DELETE('/api/teams/{slug}/members/{memberId}', { headers, params: { path } }));
    },
  };
};

export type MembersResource = ReturnType<typeof membersResource>;
