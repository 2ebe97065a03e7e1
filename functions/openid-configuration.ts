import { DISCOVERY_MAX_AGE_SECONDS, openIdConfiguration } from '#lib/auth/discovery.ts';
import { staticEndpoint } from '#lib/http/static.ts';

/**
 * GET /.well-known/openid-configuration: the issuer's OpenID discovery document, bare (JWT
 * verifiers read it as is: API Gateway's JWT authorizer, aws-jwt-verify). Public and cacheable.
 */
export const handler = staticEndpoint('openid-configuration', () => ({
  body: JSON.stringify(openIdConfiguration()),
  contentType: 'application/json; charset=utf-8',
  headers: { 'cache-control': `public, max-age=${DISCOVERY_MAX_AGE_SECONDS}` },
}));
