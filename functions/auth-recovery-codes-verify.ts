import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { useRecoveryCode } from '#lib/identity/mfa/recovery-codes.ts';

export const handler = endpoint('auth-recovery-codes-verify', ({ actor, body, now }) => useRecoveryCode(db(), actor, body.code, now));
