import { db } from '#lib/db/service.ts';
import { gotrueEndpoint } from '#lib/http/gotrue-endpoint.ts';
import { unlinkIdentity } from '#lib/identity/oauth/identities.ts';

export const handler = gotrueEndpoint('gotrue-identities-delete', ({ actor, params, now }) =>
  unlinkIdentity(db(), actor, params.identityId, now),
);
