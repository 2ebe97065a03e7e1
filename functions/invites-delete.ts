import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { deleteInvite } from '#lib/teams/invites/team-invites.ts';

export const handler = endpoint('invites-delete', ({ actor, params, now }) => deleteInvite(db(), actor, params.slug, params.id, now));
