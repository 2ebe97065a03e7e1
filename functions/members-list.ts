import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { listMembers } from '#lib/teams/members.ts';
import { pageRequest } from '#lib/wire/schemas.ts';

export const handler = endpoint('members-list', ({ actor, params, query }) => listMembers(db(), actor, params.slug, pageRequest(query)));
