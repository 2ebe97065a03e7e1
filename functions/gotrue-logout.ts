import { db } from '#lib/db/service.ts';
import { gotrueLogout } from '#lib/gotrue/auth.ts';
import { gotrueEndpoint } from '#lib/http/gotrue-endpoint.ts';

export const handler = gotrueEndpoint('gotrue-logout', ({ actor, query }) => gotrueLogout(db(), actor, query.scope));
