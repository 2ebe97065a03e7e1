import { bulkInvite } from '../lib/bulk-invites.ts';
import { db } from '../lib/db/service.ts';
import { endpoint } from '../lib/http/endpoint.ts';

export const handler = endpoint('invites-bulk', ({ actor, params, body, now }) => bulkInvite(db(), actor, params.slug, body.invites, now));
