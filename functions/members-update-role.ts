import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { updateMemberRole } from '#lib/teams/members.ts';

export const handler = endpoint('members-update-role', ({ actor, params, body, now }) =>
  updateMemberRole(db(), actor, params.slug, params.memberId, body.role, now),
);
