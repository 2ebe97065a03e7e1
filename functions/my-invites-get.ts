import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { getMyInvite } from '#lib/teams/invites/my-invites.ts';

export const handler = endpoint('my-invites-get', ({ actor, params, now }) => getMyInvite(db(), actor, params.uuid, now));
