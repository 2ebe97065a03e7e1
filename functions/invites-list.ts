import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { listTeamInvites } from '#lib/teams/invites/team-invites.ts';
import { pageRequest } from '#lib/wire/schemas.ts';

export const handler = endpoint('invites-list', ({ actor, params, query, now }) =>
  listTeamInvites(db(), actor, params.slug, pageRequest(query), now),
);
