import { db } from '#lib/db/service.ts';
import { gotrueSignUp } from '#lib/gotrue/auth.ts';
import { gotrueEndpoint } from '#lib/http/gotrue-endpoint.ts';

export const handler = gotrueEndpoint('gotrue-signup', ({ body, client, now }) => gotrueSignUp(db(), body, client, now));
