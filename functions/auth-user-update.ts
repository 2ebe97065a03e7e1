import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { updateUser } from '#lib/identity/account.ts';

export const handler = endpoint('auth-user-update', ({ actor, body, client, now }) => updateUser(db(), actor, body, client, now));
