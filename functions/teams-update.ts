import { db } from '../lib/db/service.ts';
import { endpoint } from '../lib/http/endpoint.ts';
import { TeamBody } from '../lib/schemas.ts';
import { updateTeam } from '../lib/teams.ts';

export const handler = endpoint('teams-update', { body: TeamBody }, ({ actor, params, body, now }) =>
  updateTeam(db(), actor, params.slug, body, now),
);
