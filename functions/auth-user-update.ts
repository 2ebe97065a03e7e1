import { updateUser } from '../lib/account.ts';
import { db } from '../lib/db/service.ts';
import { endpoint } from '../lib/http/endpoint.ts';
import { UserUpdateBody } from '../lib/schemas.ts';

export const handler = endpoint('auth-user-update', { body: UserUpdateBody }, ({ actor, body, client, now }) =>
  updateUser(db(), actor, body, client, now),);
