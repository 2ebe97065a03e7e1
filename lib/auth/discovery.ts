import { config } from '#lib/core/config.ts';
import type { OpenIdConfiguration } from '#lib/wire/responses.ts';
import { ALGORITHMS } from './keys/model.ts';

/** How long the discovery document may be cached: it changes only with a deploy that changes the issuer or algorithms. */
export const DISCOVERY_MAX_AGE_SECONDS = 3600;

/**
 * The OpenID discovery document of the access tokens' issuer (docs/protect-your-api.md): where a
 * verifier finds the keys (`jwks_uri`, the issuer's /.well-known/jwks.json) and what it may expect
 * of the tokens. Roster issues access tokens only: no authorization endpoint, no ID tokens.
 */
export const openIdConfiguration = (issuer = config.issuer): OpenIdConfiguration => ({
  issuer,
  jwks_uri: `${issuer}/.well-known/jwks.json`,
  // GoTrue's token endpoint (docs/supabase.md): passwords and refresh tokens, no client secret.
  token_endpoint: `${issuer}/auth/v1/token`,
  grant_types_supported: ['password', 'refresh_token'],
  response_types_supported: ['token'],
  subject_types_supported: ['public'],
  id_token_signing_alg_values_supported: [...ALGORITHMS],
  token_endpoint_auth_methods_supported: ['none'],
  claims_supported: ['iss', 'sub', 'aud', 'exp', 'iat', 'role', 'aal', 'amr', 'session_id', 'email', 'is_anonymous'],
});
