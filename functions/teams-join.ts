import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { joinTeam } from '#lib/teams/domains/join.ts';

export const handler = endpoint('teams-join', ({ actor, params, now }) => joinTeam(db(), actor, params.slug, now));
