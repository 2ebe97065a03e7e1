import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { listSessions } from '#lib/identity/account.ts';
import { pageRequest } from '#lib/wire/schemas.ts';

export const handler = endpoint('auth-sessions-list', ({ actor, now, query }) => listSessions(db(), actor, now, pageRequest(query)));
