import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { verifyDomain } from '#lib/teams/domains/domains.ts';

export const handler = endpoint('teams-domains-verify', ({ actor, params, now }) =>
  verifyDomain(db(), actor, params.slug, params.domain, now),
);
