import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { revokeSession } from '#lib/identity/account.ts';

export const handler = endpoint('auth-sessions-delete', ({ actor, params }) => revokeSession(db(), actor, params.sessionId));
