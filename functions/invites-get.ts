import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { getTeamInvite } from '#lib/teams/invites/team-invites.ts';

export const handler = endpoint('invites-get', ({ actor, params, now }) => getTeamInvite(db(), actor, params.slug, params.id, now));
