import { db } from '../lib/db/service.ts';
import { endpoint } from '../lib/http/endpoint.ts';
import { SignUpBody } from '../lib/schemas.ts';
import { signUp } from '../lib/users.ts';

export const handler = endpoint('auth-signup', { body: SignUpBody }, ({ body, client, now }) => signUp(db(), body, client, now));
