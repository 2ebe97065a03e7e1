import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { recover } from '#lib/identity/recovery.ts';

export const handler = endpoint('auth-recover', ({ body, client, now }) => recover(db(), body, client, now));
