import { db } from '../lib/db/service.ts';
import { endpoint } from '../lib/http/endpoint.ts';
import { listTeamInvites } from '../lib/invites.ts';
import { PageQuery, pageRequest } from '../lib/schemas.ts';

export const handler = endpoint('invites-list', { query: PageQuery }, ({ actor, params, query, now }) =>
  listTeamInvites(db(), actor, params.slug, pageRequest(query), now),
);
