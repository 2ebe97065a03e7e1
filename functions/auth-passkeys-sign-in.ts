import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { signInWithPasskey } from '#lib/identity/mfa/passkey-sign-in.ts';

export const handler = endpoint('auth-passkeys-sign-in', ({ body, client, now }) => signInWithPasskey(db(), body, client, now));
