import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { resendInvite } from '#lib/teams/invites/team-invites.ts';

export const handler = endpoint('invites-resend', ({ actor, params, now }) => resendInvite(db(), actor, params.slug, params.id, now));
