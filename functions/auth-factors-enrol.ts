import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { enrolFactor } from '#lib/identity/mfa/factors.ts';

export const handler = endpoint('auth-factors-enrol', ({ actor, body, now }) => enrolFactor(db(), actor, body, now));
