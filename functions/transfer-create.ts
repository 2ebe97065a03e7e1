import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { createTransfer } from '#lib/teams/transfers.ts';

export const handler = endpoint('transfer-create', ({ actor, params, body, now }) => createTransfer(db(), actor, params.slug, body, now));
