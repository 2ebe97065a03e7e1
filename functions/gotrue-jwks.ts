import { JWKS_MAX_AGE_SECONDS } from '#lib/auth/keys/model.ts';
import { publishedJwks } from '#lib/auth/keys/verification.ts';
import { staticEndpoint } from '#lib/http/static.ts';

/**
 * GET /auth/v1/.well-known/jwks.json: the JWK Set of /.well-known/jwks.json where auth-js's
 * getClaims looks for it (beside the rest of GoTrue's paths).
 */
export const handler = staticEndpoint('gotrue-jwks', async () => ({
  body: JSON.stringify(await publishedJwks()),
  contentType: 'application/json; charset=utf-8',
  headers: { 'cache-control': `public, max-age=${JWKS_MAX_AGE_SECONDS}` },
}));
