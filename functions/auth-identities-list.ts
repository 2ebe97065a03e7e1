import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { listIdentities } from '#lib/identity/oauth/identities.ts';

export const handler = endpoint('auth-identities-list', ({ actor }) => listIdentities(db(), actor));
