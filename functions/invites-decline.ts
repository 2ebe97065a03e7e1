import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { declineInvite } from '#lib/teams/invites/my-invites.ts';

export const handler = endpoint('invites-decline', ({ actor, params, now }) => declineInvite(db(), actor, params.uuid, now));
