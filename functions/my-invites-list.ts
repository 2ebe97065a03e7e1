import { db } from '../lib/db/service.ts';
import { endpoint } from '../lib/http/endpoint.ts';
import { listMyInvites } from '../lib/invites.ts';
import { pageRequest } from '../lib/schemas.ts';

export const handler = endpoint('my-invites-list', ({ actor, query, now }) => listMyInvites(db(), actor, pageRequest(query), now));
