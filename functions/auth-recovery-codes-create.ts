import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { regenerateRecoveryCodes } from '#lib/identity/mfa/recovery-codes.ts';

export const handler = endpoint('auth-recovery-codes-create', ({ actor, now }) => regenerateRecoveryCodes(db(), actor, now));
