import { db } from '#lib/db/service.ts';
import { gotrueRecover } from '#lib/gotrue/auth.ts';
import { endpoint } from '#lib/http/endpoint.ts';

export const handler = endpoint('gotrue-recover', ({ body, client, now }) => gotrueRecover(db(), body.email, client, now));
