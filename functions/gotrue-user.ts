import { db } from '#lib/db/service.ts';
import { gotrueGetUser } from '#lib/gotrue/auth.ts';
import { endpoint } from '#lib/http/endpoint.ts';

export const handler = endpoint('gotrue-user', ({ actor }) => gotrueGetUser(db(), actor));
