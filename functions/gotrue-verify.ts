import { db } from '#lib/db/service.ts';
import { gotrueVerify } from '#lib/gotrue/auth.ts';
import { gotrueEndpoint } from '#lib/http/gotrue-endpoint.ts';

export const handler = gotrueEndpoint('gotrue-verify', ({ body, client, now }) => gotrueVerify(db(), body, client, now));
