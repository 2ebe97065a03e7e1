import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { acceptInvite } from '#lib/teams/invites/my-invites.ts';

export const handler = endpoint('invites-accept', ({ actor, params, now }) => acceptInvite(db(), actor, params.uuid, now));
