import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { verifyEmail } from '#lib/identity/verification.ts';

export const handler = endpoint('auth-verify', ({ body, now }) => verifyEmail(db(), body, now));
