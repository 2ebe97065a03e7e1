import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { declineTransfer } from '#lib/teams/transfers.ts';

export const handler = endpoint('transfer-decline', ({ actor, params, now }) => declineTransfer(db(), actor, params.slug, now));
