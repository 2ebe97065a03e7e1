import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { unlinkIdentity } from '#lib/identity/oauth/identities.ts';

export const handler = endpoint('auth-identities-delete', ({ actor, params, now }) => unlinkIdentity(db(), actor, params.identityId, now));
