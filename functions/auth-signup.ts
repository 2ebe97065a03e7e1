import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { signUp } from '#lib/identity/users.ts';

export const handler = endpoint('auth-signup', ({ body, client, now }) => signUp(db(), body, client, now));
