import { db } from '#lib/db/service.ts';
import { gotrueVerify } from '#lib/gotrue/auth.ts';
import { endpoint } from '#lib/http/endpoint.ts';

export const handler = endpoint('gotrue-verify', ({ body, client, now }) => gotrueVerify(db(), body, client, now));
