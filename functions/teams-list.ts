import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { pageRequest } from '#lib/wire/schemas.ts';
import { listMyTeams } from '#lib/teams/teams.ts';

export const handler = endpoint('teams-list', ({ actor, query }) => listMyTeams(db(), actor, pageRequest(query)));
