import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { listJoinRequests } from '#lib/teams/domains/join.ts';
import { pageRequest } from '#lib/wire/schemas.ts';

export const handler = endpoint('teams-join-requests', ({ actor, params, query }) =>
  listJoinRequests(db(), actor, params.slug, pageRequest(query)),
);
