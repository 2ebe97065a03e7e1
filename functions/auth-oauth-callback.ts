import { db } from '#lib/db/service.ts';
import { redirectEndpoint } from '#lib/http/redirect-endpoint.ts';
import { finishFlow } from '#lib/identity/oauth/callback.ts';

/** GET /auth/v1/callback: the provider's answer, checked; back to the app with a code, or with the refusal. */
export const handler = redirectEndpoint('auth-oauth-callback', ({ query, now }) =>
  finishFlow(db(), new URLSearchParams(query as Record<string, string>).toString(), now),
);
