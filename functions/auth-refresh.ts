import { refresh } from '#lib/identity/refresh.ts';
import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';

export const handler = endpoint('auth-refresh', ({ body, now }) => refresh(db(), body, now));
