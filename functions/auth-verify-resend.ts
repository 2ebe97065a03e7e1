import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { resendVerification } from '#lib/identity/verification.ts';

export const handler = endpoint('auth-verify-resend', ({ actor, now }) => resendVerification(db(), actor, now));
