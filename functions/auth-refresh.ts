import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { refresh } from '#lib/identity/refresh.ts';

export const handler = endpoint('auth-refresh', ({ body, now }) => refresh(db(), body, now));
