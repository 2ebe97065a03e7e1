import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { getTeam } from '#lib/teams/teams.ts';

export const handler = endpoint('teams-get', ({ actor, params }) => getTeam(db(), actor, params.slug));
