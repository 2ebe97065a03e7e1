import { db } from '../lib/db/service.ts';
import { endpoint } from '../lib/http/endpoint.ts';
import { updateMemberRole } from '../lib/members.ts';
import { RoleBody } from '../lib/schemas.ts';

export const handler = endpoint('members-update-role', { body: RoleBody }, ({ actor, params, body, now }) =>
  updateMemberRole(db(), actor, params.slug, params.memberId, body.role, now),
);
