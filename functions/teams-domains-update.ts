import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { updateDomain } from '#lib/teams/domains/domains.ts';

export const handler = endpoint('teams-domains-update', ({ actor, params, body, now }) =>
  updateDomain(db(), actor, params.slug, params.domain, body, now),
);
