import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { exchangeCode } from '#lib/identity/oauth/exchange.ts';

export const handler = endpoint('auth-oauth-token', ({ body, client, now }) => exchangeCode(db(), body, client, now));
