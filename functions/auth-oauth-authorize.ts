import { db } from '#lib/db/service.ts';
import { redirectEndpoint } from '#lib/http/redirect-endpoint.ts';
import { startFlow } from '#lib/identity/oauth/start.ts';

/** GET /api/auth/oauth/{provider}?redirectTo=…&codeChallenge=…: to the provider's sign-in page. */
export const handler = redirectEndpoint('auth-oauth-authorize', ({ params, query, now }) =>
  startFlow(db(), { provider: params.provider, ...query }, now),
);
