import { db } from '#lib/db/service.ts';
import { gotrueResend } from '#lib/gotrue/auth.ts';
import { gotrueEndpoint } from '#lib/http/gotrue-endpoint.ts';

export const handler = gotrueEndpoint('gotrue-resend', ({ body, client, now }) => gotrueResend(db(), body, client, now));
