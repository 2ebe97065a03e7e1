import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { renameFactor } from '#lib/identity/mfa/factors.ts';

export const handler = endpoint('auth-factors-rename', ({ actor, params, body, now }) =>
  renameFactor(db(), actor, params.factorId, body.friendly_name, now),
);
