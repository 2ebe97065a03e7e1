import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { deleteTeam } from '#lib/teams/teams.ts';

export const handler = endpoint('teams-delete', ({ actor, params, now }) => deleteTeam(db(), actor, params.slug, now));
