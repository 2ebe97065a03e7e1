import { signOut } from '../lib/account.ts';
import { db } from '../lib/db/service.ts';
import { endpoint } from '../lib/http/endpoint.ts';
import { SignOutQuery } from '../lib/schemas.ts';

export const handler = endpoint('auth-signout', { query: SignOutQuery }, ({ actor, query }) => signOut(db(), actor, query.scope ?? 'local'));
