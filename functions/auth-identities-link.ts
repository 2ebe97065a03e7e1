import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { startLink } from '#lib/identity/oauth/link.ts';

export const handler = endpoint('auth-identities-link', ({ actor, body, now }) => startLink(db(), actor, body, now));
