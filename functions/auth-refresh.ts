import { refresh } from '../lib/account.ts';
import { db } from '../lib/db/service.ts';
import { endpoint } from '../lib/http/endpoint.ts';
import { RefreshBody } from '../lib/schemas.ts';

export const handler = endpoint('auth-refresh', { body: RefreshBody }, ({ body, client, now }) => refresh(db(), body, client, now));
