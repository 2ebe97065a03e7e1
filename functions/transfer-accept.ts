import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { acceptTransfer } from '#lib/teams/transfers.ts';

export const handler = endpoint('transfer-accept', ({ actor, params, now }) => acceptTransfer(db(), actor, params.slug, now));
