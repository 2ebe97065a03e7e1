import { db } from '#lib/db/service.ts';
import { staticEndpoint } from '#lib/http/static.ts';
import { securityGet } from '#lib/identity/mfa/security-page.ts';

/** GET /account/security: the signed-in user's factors and passkeys, or the sign-in form. */
export const handler = staticEndpoint('page-security', (event) => securityGet(db(), event.cookies));
