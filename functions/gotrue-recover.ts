import { db } from '#lib/db/service.ts';
import { gotrueRecover } from '#lib/gotrue/auth.ts';
import { gotrueEndpoint } from '#lib/http/gotrue-endpoint.ts';

export const handler = gotrueEndpoint('gotrue-recover', ({ body, client, now }) => gotrueRecover(db(), body.email, client, now));
