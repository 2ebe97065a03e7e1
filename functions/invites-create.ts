import { db } from '../lib/db/service.ts';
import { endpoint } from '../lib/http/endpoint.ts';
import { createInvite } from '../lib/invites.ts';

export const handler = endpoint('invites-create', ({ actor, params, body, now }) => createInvite(db(), actor, params.slug, body, now));
