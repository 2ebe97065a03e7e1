import { db } from '../lib/db/service.ts';
import { endpoint } from '../lib/http/endpoint.ts';
import { createInvite } from '../lib/invites.ts';
import { InviteBody } from '../lib/schemas.ts';

export const handler = endpoint('invites-create', { body: InviteBody }, ({ actor, params, body, now }) =>
  createInvite(db(), actor, params.slug, body, now),
);
