import { JWKS_MAX_AGE_SECONDS } from '#lib/auth/keys/model.ts';
import { publishedJwks } from '#lib/auth/keys/verification.ts';
import { staticEndpoint } from '#lib/http/static.ts';

/**
 * GET /.well-known/jwks.json: the public keys that verify access tokens, as a bare JWK Set (RFC
 * 7517 §5, not enveloped in `data`: JWT libraries read it as is). Public, cacheable for a minute,
 * and at most 10 s behind the table, so a verifier elsewhere that meets a new kid and refetches
 * finds the key; errors keep the API envelope.
 */
export const handler = staticEndpoint('jwks', async () => ({
  body: JSON.stringify(await publishedJwks()),
  contentType: 'application/json; charset=utf-8',
  headers: { 'cache-control': `public, max-age=${JWKS_MAX_AGE_SECONDS}` },
}));
