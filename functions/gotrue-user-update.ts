import { db } from '#lib/db/service.ts';
import { gotrueUpdateUser } from '#lib/gotrue/auth.ts';
import { endpoint } from '#lib/http/endpoint.ts';

export const handler = endpoint('gotrue-user-update', ({ actor, body, client, now }) => gotrueUpdateUser(db(), actor, body, client, now));
