import { db } from '#lib/db/service.ts';
import { gotrueLinkIdentity } from '#lib/gotrue/oauth.ts';
import { gotrueEndpoint } from '#lib/http/gotrue-endpoint.ts';

export const handler = gotrueEndpoint('gotrue-identities-authorize', ({ actor, query, now }) =>
  gotrueLinkIdentity(db(), actor, query, now),
);
