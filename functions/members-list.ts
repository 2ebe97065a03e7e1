import { db } from '../lib/db/service.ts';
import { endpoint } from '../lib/http/endpoint.ts';
import { listMembers } from '../lib/members.ts';
import { PageQuery, pageRequest } from '../lib/schemas.ts';

export const handler = endpoint('members-list', { query: PageQuery }, ({ actor, params, query }) =>
  listMembers(db(), actor, params.slug, pageRequest(query)),
);
