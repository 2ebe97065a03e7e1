import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { listFactors } from '#lib/identity/mfa/factors.ts';

export const handler = endpoint('auth-factors-list', ({ actor }) => listFactors(db(), actor));
