import { db } from '#lib/db/service.ts';
import { gotrueToken } from '#lib/gotrue/auth.ts';
import { endpoint } from '#lib/http/endpoint.ts';

export const handler = endpoint('gotrue-token', ({ body, query, client, now }) => gotrueToken(db(), query.grant_type, body, client, now));
