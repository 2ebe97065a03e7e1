import { db } from '#lib/db/service.ts';
import { gotrueEndpoint } from '#lib/http/gotrue-endpoint.ts';
import { challengeFactor } from '#lib/identity/mfa/step-up.ts';

export const handler = gotrueEndpoint('gotrue-factors-challenge', ({ actor, params, body, now }) =>
  challengeFactor(db(), actor, params.factorId, body, now),
);
