import { db } from '#lib/db/service.ts';
import { gotrueLogout } from '#lib/gotrue/auth.ts';
import { endpoint } from '#lib/http/endpoint.ts';

export const handler = endpoint('gotrue-logout', ({ actor, query }) => gotrueLogout(db(), actor, query.scope));
