import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { deleteAccount } from '#lib/identity/account-deletion.ts';

export const handler = endpoint('auth-user-delete', ({ actor, body, client, now }) => deleteAccount(db(), actor, body, client, now));
