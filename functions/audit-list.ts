import { db } from '#lib/db/service.ts';
import { listAudit } from '#lib/events/audit-log.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { pageRequest } from '#lib/wire/schemas.ts';

export const handler = endpoint('audit-list', ({ actor, params, query }) =>
  listAudit(db(), actor, params.slug, { ...pageRequest(query), action: query.action }),
);
