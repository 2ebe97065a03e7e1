import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { getCurrentUser } from '#lib/identity/account.ts';

export const handler = endpoint('auth-user', ({ actor }) => getCurrentUser(db(), actor));
