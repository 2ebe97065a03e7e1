import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { removeMember } from '#lib/teams/members.ts';

export const handler = endpoint('members-remove', ({ actor, params, now }) => removeMember(db(), actor, params.slug, params.memberId, now));
