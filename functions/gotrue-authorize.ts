import { db } from '#lib/db/service.ts';
import { gotrueAuthorize } from '#lib/gotrue/oauth.ts';
import { redirectEndpoint } from '#lib/http/redirect-endpoint.ts';

/** GET /auth/v1/authorize?provider=…: to the provider's sign-in page (auth-js's signInWithOAuth). */
export const handler = redirectEndpoint('gotrue-authorize', ({ query, now }) => gotrueAuthorize(db(), query, now));
