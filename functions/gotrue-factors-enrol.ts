import { db } from '#lib/db/service.ts';
import { gotrueEndpoint } from '#lib/http/gotrue-endpoint.ts';
import { enrolFactor } from '#lib/identity/mfa/factors.ts';

export const handler = gotrueEndpoint('gotrue-factors-enrol', ({ actor, body, now }) => enrolFactor(db(), actor, body, now));
