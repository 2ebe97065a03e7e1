import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { answerJoinRequest } from '#lib/teams/domains/join.ts';

export const handler = endpoint('teams-join-accept', ({ actor, params, now }) =>
  answerJoinRequest(db(), actor, params.slug, params.id, true, now),
);
