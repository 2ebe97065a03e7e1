import { db } from '#lib/db/service.ts';
import { gotrueUpdateUser } from '#lib/gotrue/auth.ts';
import { gotrueEndpoint } from '#lib/http/gotrue-endpoint.ts';

export const handler = gotrueEndpoint('gotrue-user-update', ({ actor, body, client, now }) =>
  gotrueUpdateUser(db(), actor, body, client, now),
);
