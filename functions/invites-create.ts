import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { createInvite } from '#lib/teams/invites/create.ts';

export const handler = endpoint('invites-create', ({ actor, params, body, now }) => createInvite(db(), actor, params.slug, body, now));
