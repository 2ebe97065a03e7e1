import { db } from '#lib/db/service.ts';
import { gotrueToken } from '#lib/gotrue/auth.ts';
import { gotrueEndpoint } from '#lib/http/gotrue-endpoint.ts';

export const handler = gotrueEndpoint('gotrue-token', ({ body, query, client, now }) =>
  gotrueToken(db(), query.grant_type, body, client, now),
);
