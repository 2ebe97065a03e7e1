import { db } from '#lib/db/service.ts';
import { gotrueGetUser } from '#lib/gotrue/auth.ts';
import { gotrueEndpoint } from '#lib/http/gotrue-endpoint.ts';

export const handler = gotrueEndpoint('gotrue-user', ({ actor }) => gotrueGetUser(db(), actor));
