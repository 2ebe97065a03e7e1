import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { listDomains } from '#lib/teams/domains/domains.ts';

export const handler = endpoint('teams-domains-list', ({ actor, params }) => listDomains(db(), actor, params.slug));
