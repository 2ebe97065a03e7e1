import * as oidc from 'openid-client';
import * as z from 'zod/mini';
import type { Provider } from '#lib/core/oauth-settings.ts';
import { config } from '#lib/core/config.ts';
import { isLocal } from './keys/cache.ts';
import { secretString, secretsManager } from './secret-store.ts';

/**
 * Clients of the providers people may sign in with (OAUTH_PROVIDERS, docs/sso.md; their settings
 * in lib/core/oauth-settings.ts). The protocol is openid-client's; Roster only configures it.
 */

export type { Provider };

/** Plain http only to this machine (a provider the tests or a developer run locally), never across a network. */
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
const plainHttpAllowed = (url: string): boolean => {
  const { protocol, hostname } = new URL(url);
  return protocol === 'http:' && LOOPBACK.has(hostname);
};

/** Seconds one provider request may take: a callback makes at most three, inside the function's 10 s. */
export const PROVIDER_TIMEOUT_SECONDS = 2.5;

const tuned = (configuration: oidc.Configuration, url: string): oidc.Configuration => {
  if (plainHttpAllowed(url)) oidc.allowInsecureRequests(configuration);
  configuration.timeout = PROVIDER_TIMEOUT_SECONDS;
  return configuration;
};

/** The provider's server metadata: discovered once per process for OpenID Connect, fixed for GitHub. */
const servers = new Map<string, Promise<oidc.ServerMetadata>>();
const serverOf = (p: Provider): Promise<oidc.ServerMetadata> => {
  const known = servers.get(p.id);
  if (known) return known;
  const found =
    p.type === 'github'
      ? Promise.resolve<oidc.ServerMetadata>({
          issuer: new URL(p.authorizationUrl).origin,
          authorization_endpoint: p.authorizationUrl,
          token_endpoint: p.tokenUrl,
        })
      : oidc
          .discovery(new URL(p.issuer), p.clientId, undefined, undefined, {
            execute: plainHttpAllowed(p.issuer) ? [oidc.allowInsecureRequests] : [],
            timeout: PROVIDER_TIMEOUT_SECONDS,
          })
          .then((c) => c.serverMetadata());
  // A failed discovery is asked again by the next request rather than remembered.
  servers.set(p.id, found);
  found.catch(() => servers.delete(p.id));
  return found;
};

const originOf = (p: Provider) => (p.type === 'github' ? p.tokenUrl : p.issuer);

/** A client of the provider without its secret: enough to build the authorization URL. */
export const publicClient = async (p: Provider): Promise<oidc.Configuration> =>
  tuned(new oidc.Configuration(await serverOf(p), p.clientId), originOf(p));

let secrets: Promise<Record<string, string>> | undefined;
const SecretMap = z.record(z.string(), z.string().check(z.minLength(1)));
const loadSecrets = async (): Promise<Record<string, string>> => {
  if (config.oauthSecretArn) return SecretMap.parse(JSON.parse(await secretString(secretsManager(), { SecretId: config.oauthSecretArn })));
  if (isLocal() && config.oauthClientSecrets) return SecretMap.parse(JSON.parse(config.oauthClientSecrets));
  throw new Error('OAUTH_SECRET_ARN is not set: this function cannot finish a provider sign-in');
};

/** The providers' client secrets, read once per process (a missing one is read again on the next request). */
const secretOf = async (p: Provider): Promise<string> => {
  secrets ??= loadSecrets().catch((error: unknown) => {
    secrets = undefined;
    throw error;
  });
  const secret = (await secrets)[p.id];
  if (secret === undefined) throw new Error(`the provider secret has no entry for ${p.id}`);
  return secret;
};

const confidential = new Map<string, Promise<oidc.Configuration>>();

/**
 * A client of the provider with its secret, to trade the provider's code (client_secret_post, as
 * Google, GitHub, Okta and Entra accept), made once per process: the secret and the discovery are
 * read together, and an OpenID provider's ID tokens have their signature checked against its key
 * set (`enableNonRepudiationChecks`), which the client fetches once and keeps.
 */
export const confidentialClient = (p: Provider): Promise<oidc.Configuration> => {
  const known = confidential.get(p.id);
  if (known) return known;
  const made = Promise.all([serverOf(p), secretOf(p)]).then(([server, secret]) => {
    const configuration = tuned(new oidc.Configuration(server, p.clientId, secret), originOf(p));
    if (p.type === 'oidc') oidc.enableNonRepudiationChecks(configuration);
    return configuration;
  });
  confidential.set(p.id, made);
  made.catch(() => confidential.delete(p.id));
  return made;
};
