import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { resetPassword } from '#lib/identity/password-reset.ts';

export const handler = endpoint('auth-reset', ({ body, client, now }) => resetPassword(db(), body, client, now));
