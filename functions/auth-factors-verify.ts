import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { verifyFactor } from '#lib/identity/mfa/step-up.ts';

export const handler = endpoint('auth-factors-verify', ({ actor, params, body, now }) =>
  verifyFactor(db(), actor, params.factorId, body, now),
);
