import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { removeFactor } from '#lib/identity/mfa/factors.ts';

export const handler = endpoint('auth-factors-delete', ({ actor, params, now }) => removeFactor(db(), actor, params.factorId, now));
