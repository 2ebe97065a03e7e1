import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { cancelTransfer } from '#lib/teams/transfers.ts';

export const handler = endpoint('transfer-cancel', ({ actor, params, now }) => cancelTransfer(db(), actor, params.slug, now));
