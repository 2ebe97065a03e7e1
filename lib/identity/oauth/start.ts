import * as oidc from 'openid-client';
import { publicClient } from '#lib/auth/oauth-providers.ts';
import { providerNamed, providers } from '#lib/core/oauth-settings.ts';
import { hashOpaqueToken } from '#lib/auth/opaque-tokens.ts';
import { config } from '#lib/core/config.ts';
import { AppError } from '#lib/core/errors.ts';
import { s256 } from '#lib/core/sha256.ts';
import { expirySeconds, isoMillis } from '#lib/core/time.ts';
import type { Db } from '#lib/db/service.ts';
import type { ProviderStart } from '#lib/wire/oauth.ts';

/**
 * The first leg of a provider sign-in (docs/sso.md): the browser is sent to the provider with
 * Roster's own `state`, `nonce` and PKCE challenge, all remembered in an `oauthFlow` item until
 * the provider sends the browser back to CALLBACK_PATH.
 */

export const CALLBACK_PATH = '/auth/v1/callback';
/** How long a person may take at the provider's pages. */
export const FLOW_MINUTES = 10;

/** The URL the providers are registered with (docs/sso.md): exact, as they compare it. */
export const callbackUrl = (): string => `${config.publicUrl}${CALLBACK_PATH}`;

const field = (name: string, message: string) => new AppError('validation_failed', undefined, { fields: { [name]: message } });

/**
 * `redirectTo` when OAUTH_REDIRECT_URLS lists it: the same origin and path as an entry (a query
 * of the app's own allowed, never a fragment), or the first entry when none is asked for. A prefix
 * or a pattern is not enough: an open redirect on the app's domain would then carry the code away.
 */
export const allowedRedirect = (redirectTo: string | undefined, name: string): string => {
  const [first] = config.redirectUrls;
  if (first === undefined)
    throw field(name, 'this deployment lists no redirect URL (OAUTH_REDIRECT_URLS), so no provider sign-in can finish');
  if (redirectTo === undefined || redirectTo === '') return first;
  let asked: URL;
  try {
    asked = new URL(redirectTo);
  } catch {
    throw field(name, 'must be an absolute URL');
  }
  // Scheme, host, port and path each compared: an opaque origin ('null', as any custom scheme has) matches nothing.
  const fits = config.redirectUrls.some((entry) => {
    const allowed = new URL(entry);
    return (
      asked.origin !== 'null' && allowed.protocol === asked.protocol && allowed.host === asked.host && allowed.pathname === asked.pathname
    );
  });
  if (!fits || asked.hash !== '' || asked.username !== '' || asked.password !== '')
    throw field(name, 'is not one of the redirect URLs this deployment allows (OAUTH_REDIRECT_URLS)');
  return asked.href;
};

/** The app's own PKCE challenge: S256 only, since a `plain` one would travel in the URL as the verifier itself. */
const appChallenge = (start: ProviderStart, names: { challenge: string; method: string }): string => {
  if (start.codeChallenge === undefined)
    throw field(
      names.challenge,
      "is required: Roster answers provider sign-ins with a code for the PKCE flow only (auth-js: createClient(…, { auth: { flowType: 'pkce' } }))",
    );
  if (start.codeChallengeMethod !== undefined && start.codeChallengeMethod.toLowerCase() !== 's256')
    throw field(names.method, 'must be S256');
  return start.codeChallenge;
};

/** The names a start's fields go by in its dialect, for the errors that point at them. */
export interface FlowNames {
  provider: string;
  redirect: string;
  challenge: string;
  method: string;
}
const SEED_NAMES: FlowNames = { provider: 'provider', redirect: 'redirectTo', challenge: 'codeChallenge', method: 'codeChallengeMethod' };
export const GOTRUE_NAMES: FlowNames = {
  provider: 'provider',
  redirect: 'redirect_to',
  challenge: 'code_challenge',
  method: 'code_challenge_method',
};

/**
 * Remembers the flow and answers the provider's authorization URL. `linkUserUuid`: the signed-in
 * account the provider is to be linked to, rather than a sign-in. Throws `validation_failed`
 * (a provider this deployment does not offer, a redirect it does not allow, no S256 challenge).
 */
export const startFlow = async (
  db: Db,
  start: ProviderStart,
  now: Date,
  { linkUserUuid, names = SEED_NAMES }: { linkUserUuid?: string; names?: FlowNames } = {},
): Promise<string> => {
  const provider = providerNamed(start.provider);
  if (!provider) {
    const offered = providers().map((p) => p.id);
    throw field(names.provider, offered.length ? `must be one of ${offered.join(', ')}` : 'this deployment offers no provider sign-in');
  }
  const redirectTo = allowedRedirect(start.redirectTo, names.redirect);
  const codeChallenge = appChallenge(start, names);
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const verifier = oidc.randomPKCECodeVerifier();
  const expiresAt = now.getTime() + FLOW_MINUTES * 60_000;
  const client = await publicClient(provider);
  await db.entities.oauthFlow
    .create({
      stateHash: hashOpaqueToken(state),
      provider: provider.id,
      redirectTo,
      codeChallenge,
      verifier,
      nonce,
      ...(linkUserUuid ? { linkUserUuid } : {}),
      createdAt: isoMillis(now),
      expiresAt,
      ttl: expirySeconds(expiresAt),
    })
    .go();
  return oidc
    .buildAuthorizationUrl(client, {
      redirect_uri: callbackUrl(),
      scope: provider.scopes,
      state,
      code_challenge: s256(verifier),
      code_challenge_method: 'S256',
      ...(provider.type === 'oidc' ? { nonce } : {}),
    })
    .toString();
};
