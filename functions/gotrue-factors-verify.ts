import { db } from '#lib/db/service.ts';
import { gotrueStepUp } from '#lib/gotrue/auth.ts';
import { gotrueEndpoint } from '#lib/http/gotrue-endpoint.ts';
import { verifyFactor } from '#lib/identity/mfa/step-up.ts';

export const handler = gotrueEndpoint('gotrue-factors-verify', async ({ actor, params, body, now }) =>
  gotrueStepUp(await verifyFactor(db(), actor, params.factorId, body, now)),
);
