import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { createTeam } from '#lib/teams/teams.ts';

export const handler = endpoint('teams-create', ({ actor, body, now }) => createTeam(db(), actor, body, now));
