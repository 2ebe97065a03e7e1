import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { removeDomain } from '#lib/teams/domains/domains.ts';

export const handler = endpoint('teams-domains-delete', ({ actor, params, now }) =>
  removeDomain(db(), actor, params.slug, params.domain, now),
);
