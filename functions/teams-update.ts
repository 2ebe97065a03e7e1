import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { updateTeam } from '#lib/teams/teams.ts';

export const handler = endpoint('teams-update', ({ actor, params, body, now }) => updateTeam(db(), actor, params.slug, body, now));
