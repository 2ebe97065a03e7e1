import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { listMyInvites } from '#lib/teams/invites/my-invites.ts';
import { pageRequest } from '#lib/wire/schemas.ts';

export const handler = endpoint('my-invites-list', ({ actor, query, now }) => listMyInvites(db(), actor, pageRequest(query), now));
