import type { Caller } from '../caller.js';
import { type Transfer, type WriteOptions, idempotencyHeader } from '../types.js';

/** A team's ownership transfer: one open at a time, proposed by an OWNER, answered by the nominee. */
export const transfersResource = ({ api, call }: Caller) => ({
  /**
   * OWNER only: proposes `memberId` (the member's `id`, not their `userId`) as OWNER, replacing any
   * open transfer; on acceptance the caller becomes ADMIN. The nominee is told by e-mail.
   */
  async nominate(slug: string, memberId: number, options?: WriteOptions): Promise<Transfer> {
    const path = { slug };
    return (
      await call((headers) =>
        api.POST('/api/teams/{slug}/transfer', { headers, params: { path, ...idempotencyHeader(options) }, body: { memberId } }),
      )
    ).data.data;
  },

  /** The nominee only: becomes OWNER, the nominating owner ADMIN (409 `transfer_stale` if either role changed). */
  async accept(slug: string, options?: WriteOptions): Promise<void> {
    await call((headers) =>
      api.POST('/api/teams/{slug}/transfer/accept', { headers, params: { path: { slug }, ...idempotencyHeader(options) } }),
    );
  },

  /** The nominee only: ends the transfer; nothing else changes. */
  async decline(slug: string, options?: WriteOptions): Promise<void> {
    await call((headers) =>
      api.POST('/api/teams/{slug}/transfer/decline', { headers, params: { path: { slug }, ...idempotencyHeader(options) } }),
    );
  },

  /** The nominating owner only: withdraws the transfer. */
  async cancel(slug: string): Promise<void> {
    await call((headers) => api.DELETE('/api/teams/{slug}/transfer', { headers, params: { path: { slug } } }));
  },
});

export type TransfersResource = ReturnType<typeof transfersResource>;
