import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { joinableTeams } from '#lib/teams/domains/join.ts';

export const handler = endpoint('teams-joinable', ({ actor }) => joinableTeams(db(), actor));
