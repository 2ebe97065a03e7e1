import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { signIn } from '#lib/identity/users.ts';

export const handler = endpoint('auth-signin', ({ body, client, now }) => signIn(db(), body, client, now));
