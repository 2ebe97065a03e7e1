import { db } from '#lib/db/service.ts';
import { gotrueSignUp } from '#lib/gotrue/auth.ts';
import { endpoint } from '#lib/http/endpoint.ts';

export const handler = endpoint('gotrue-signup', ({ body, client, now }) => gotrueSignUp(db(), body, client, now));
