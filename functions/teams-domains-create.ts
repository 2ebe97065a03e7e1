import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { addDomain } from '#lib/teams/domains/domains.ts';

export const handler = endpoint('teams-domains-create', ({ actor, params, body, now }) => addDomain(db(), actor, params.slug, body, now));
