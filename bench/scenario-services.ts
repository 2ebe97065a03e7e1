import { freePort } from '#infra/dynamodb-local.ts';
import { startIdp } from '#test/helpers/oidc-idp.ts';

/**
 * What the provider sign-in and domain scenarios need beside the handlers, and the settings that
 * point the handlers at it: an OpenID provider on loopback (bench/oauth-scenarios.ts), registered
 * with the callback of the public URL given, and the port of the DNS server the domain scenarios
 * start in the process that runs them (bench/domain-scenarios.ts). Set the settings before the
 * handlers load: this module imports none of them.
 */

/** The provider and app the scenarios use (OAUTH_PROVIDERS, OAUTH_REDIRECT_URLS). */
export const BENCH_PROVIDER = 'google';
export const BENCH_APP_URL = 'http://localhost:5173/auth/callback';
export const startScenarioServices = async () => {
  const publicUrl = 'http://localhost:3000';
  const idp = await startIdp({ redirectUri: `${publicUrl}/auth/v1/callback`, anyone: true });
  const env = {
    DNS_SERVERS: `127.0.0.1:${await freePort()}`,
    PUBLIC_URL: publicUrl,
    OAUTH_BENCH_ISSUER: idp.issuer,
    OAUTH_REDIRECT_URLS: BENCH_APP_URL,
    OAUTH_PROVIDERS: JSON.stringify([{ id: BENCH_PROVIDER, type: 'oidc', issuer: idp.issuer, clientId: idp.clientId }]),
    OAUTH_CLIENT_SECRETS: JSON.stringify({ [BENCH_PROVIDER]: idp.clientSecret }),
  };
  return { env, stop: () => idp.stop() };
};
