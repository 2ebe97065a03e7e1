import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { bulkInvite, hasRetryableRows } from '#lib/teams/invites/bulk.ts';

export const handler = endpoint('invites-bulk', async ({ actor, params, body, now, remainingMs, notToKeep }) => {
  const results = await bulkInvite(db(), actor, params.slug, body.invites, now, remainingMs);
  if (hasRetryableRows(results)) notToKeep();
  return results;
});
