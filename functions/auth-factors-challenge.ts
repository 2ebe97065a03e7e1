import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { challengeFactor } from '#lib/identity/mfa/step-up.ts';

export const handler = endpoint('auth-factors-challenge', ({ actor, params, body, now }) =>
  challengeFactor(db(), actor, params.factorId, body, now),
);
