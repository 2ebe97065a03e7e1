import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { listMyTeams } from '#lib/teams/teams.ts';
import { pageRequest } from '#lib/wire/schemas.ts';

export const handler = endpoint('teams-list', ({ actor, query }) => listMyTeams(db(), actor, pageRequest(query)));
