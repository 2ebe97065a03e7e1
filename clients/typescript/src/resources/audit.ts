import type { Caller } from '../caller.js';
import { paginate, toPage } from '../pagination.js';
import type { AuditEntry, AuditQuery, Page } from '../types.js';

/** A team's audit log, for its OWNERs and ADMINs. */
export const auditResource = ({ api, call }: Caller) => {
  /** One page of the log, newest first; `action` keeps one kind of entry. */
  const list = async (slug: string, query: AuditQuery = {}): Promise<Page<AuditEntry>> =>
    toPage(await call((headers) => api.GET('/api/teams/{slug}/audit', { headers, params: { path: { slug }, query } })));

  return {
    list,
    /** Every entry, newest first, with the same `action` filter on every page. */
    all: (slug: string, query: AuditQuery = {}): AsyncGenerator<AuditEntry> => paginate((q) => list(slug, q), query),
  };
};

export type AuditResource = ReturnType<typeof auditResource>;
