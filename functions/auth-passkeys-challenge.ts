import { db } from '#lib/db/service.ts';
import { endpoint } from '#lib/http/endpoint.ts';
import { passkeySignInChallenge } from '#lib/identity/mfa/passkey-sign-in.ts';

export const handler = endpoint('auth-passkeys-challenge', ({ client, now }) => passkeySignInChallenge(db(), client, now));
