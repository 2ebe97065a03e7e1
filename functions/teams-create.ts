import { db } from '../lib/db/service.ts';
import { endpoint } from '../lib/http/endpoint.ts';
import { TeamBody } from '../lib/schemas.ts';
import { createTeam } from '../lib/teams.ts';

export const handler = endpoint('teams-create', { body: TeamBody }, ({ actor, body, now }) => createTeam(db(), actor, body, now));
