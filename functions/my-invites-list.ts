import { db } from '../lib/db/service.ts';
import { endpoint } from '../lib/http/endpoint.ts';
import { listMyInvites } from '../lib/invites.ts';
import { PageQuery, pageRequest } from '../lib/schemas.ts';

export const handler = endpoint('my-invites-list', { query: PageQuery }, ({ actor, query, now }) =>
  listMyInvites(db(), actor, pageRequest(query), now),
);
