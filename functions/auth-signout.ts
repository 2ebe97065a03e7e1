import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { signOut } from '#lib/identity/account.ts';

export const handler = endpoint('auth-signout', ({ actor, query }) => signOut(db(), actor, query.scope ?? 'local'));
