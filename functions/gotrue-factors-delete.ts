import { db } from '#lib/db/service.ts';
import { gotrueEndpoint } from '#lib/http/gotrue-endpoint.ts';
import { removeFactor } from '#lib/identity/mfa/factors.ts';

export const handler = gotrueEndpoint('gotrue-factors-delete', ({ actor, params, now }) => removeFactor(db(), actor, params.factorId, now));
