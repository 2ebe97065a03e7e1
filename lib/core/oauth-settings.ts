import * as z from 'zod/mini';
import { config } from './config.ts';

/**
 * The providers people may sign in with (OAUTH_PROVIDERS locally, `-c oauthProviders` deployed;
 * docs/sso.md): any OpenID Connect provider by its issuer (Google, Okta, Entra ID, …), or GitHub,
 * whose OAuth 2.0 has no ID token (its user and e-mails API says who signed in). Checked at synth
 * and again by the functions. Client secrets are never here: they live in the secret store.
 */

const ProviderId = z.string().check(
  z.regex(/^[a-z][a-z0-9-]{0,31}$/, { error: 'is lower-case letters, digits and dashes, at most 32' }),
  z.refine((id) => id !== 'email', { error: 'email is the password sign-in' }),
);
const ClientId = z.string().check(z.minLength(1));

const OidcProvider = z.strictObject({
  id: ProviderId,
  type: z.literal('oidc'),
  /** The issuer identifier: discovery reads `{issuer}/.well-known/openid-configuration`, and every ID token must name it. */
  issuer: z.url(),
  clientId: ClientId,
  scopes: z._default(z.string(), 'openid email profile'),
});

const GithubProvider = z.strictObject({
  id: ProviderId,
  type: z.literal('github'),
  clientId: ClientId,
  scopes: z._default(z.string(), 'read:user user:email'),
  /** GitHub Enterprise Server has its own; the defaults are github.com's. */
  authorizationUrl: z._default(z.url(), 'https://github.com/login/oauth/authorize'),
  tokenUrl: z._default(z.url(), 'https://github.com/login/oauth/access_token'),
  apiUrl: z._default(z.url(), 'https://api.github.com'),
});

export const ProviderSettings = z
  .array(z.discriminatedUnion('type', [OidcProvider, GithubProvider]))
  .check(z.refine((list) => new Set(list.map((p) => p.id)).size === list.length, { error: 'names each provider id once' }));
export type Provider = z.infer<typeof ProviderSettings>[number];

let parsed: readonly Provider[] | undefined;
/** The configured providers; a malformed OAUTH_PROVIDERS fails the first request loudly, not one user's sign-in quietly. */
export const providers = (): readonly Provider[] => (parsed ??= ProviderSettings.parse(JSON.parse(config.oauthProviders)));

export const providerNamed = (id: string): Provider | undefined => providers().find((p) => p.id === id);
