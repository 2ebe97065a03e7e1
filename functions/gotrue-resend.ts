import { db } from '#lib/db/service.ts';
import { gotrueResend } from '#lib/gotrue/auth.ts';
import { endpoint } from '#lib/http/endpoint.ts';

export const handler = endpoint('gotrue-resend', ({ body, client, now }) => gotrueResend(db(), body, client, now));
