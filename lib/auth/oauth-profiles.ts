import * as oidc from 'openid-client';
import * as z from 'zod/mini';
import { Email, text } from '#lib/wire/schemas.ts';
import { type Provider, PROVIDER_TIMEOUT_SECONDS, confidentialClient } from './oauth-providers.ts';

/**
 * Who signed in at a provider, from the provider's answer to Roster's authorization request: the
 * code traded (with Roster's PKCE verifier) and, for OpenID Connect, the ID token checked by
 * openid-client (signature, issuer, audience, expiry, nonce); for GitHub, its user and e-mails API.
 */
export interface ProviderProfile {
  /** The provider's stable id for the person (`sub`; GitHub's numeric user id). */
  subject: string;
  /** As Roster keeps addresses (lib/wire/schemas.ts Email: ASCII checked before lower-casing, at most 254). */
  email: string;
  /** Whether the provider vouches that the person controls `email`. */
  emailVerified: boolean;
  firstName: string;
  lastName: string;
}

export interface FlowChecks {
  state: string;
  nonce: string;
  verifier: string;
}

/** A provider's answer that cannot be trusted: the reason is logged, never shown. */
export class ProviderRefused extends Error {}

/** A name as Roster keeps names (no hidden or control characters, at most 100), else none. */
const NAME = z.catch(text(100), '');
const nameParts = (given: unknown, family: unknown, full: unknown): { firstName: string; lastName: string } => {
  const first = NAME.parse(given);
  const last = NAME.parse(family);
  if (first || last) return { firstName: first, lastName: last };
  const [head = '', ...rest] = NAME.parse(full).split(/\s+/);
  return { firstName: head, lastName: rest.join(' ').slice(0, 100) };
};

/**
 * The provider's address through the API's own rule: a look-alike (U+212A KELVIN SIGN lower-cases to
 * `k`) or an overlong one is refused, never linked to the account whose address it imitates.
 */
const addressOf = (raw: unknown): string => {
  const parsed = Email.safeParse(raw);
  if (!parsed.success) throw new ProviderRefused('the provider names no usable e-mail address');
  return parsed.data;
};

/** `email_verified` as providers send it: a boolean, or (some) the string "true". */
const isTrue = (value: unknown): boolean => value === true || value === 'true';

const oidcProfile = async (client: oidc.Configuration, currentUrl: URL, checks: FlowChecks): Promise<ProviderProfile> => {
  const tokens = await oidc.authorizationCodeGrant(client, currentUrl, {
    pkceCodeVerifier: checks.verifier,
    expectedState: checks.state,
    expectedNonce: checks.nonce,
    idTokenExpected: true,
  });
  const claims = tokens.claims();
  if (!claims) throw new ProviderRefused('no ID token');
  // An address missing from the ID token is asked of the userinfo endpoint, for the same subject.
  const info = typeof claims.email === 'string' ? claims : await oidc.fetchUserInfo(client, tokens.access_token, claims.sub);
  return {
    subject: claims.sub,
    email: addressOf(info.email),
    emailVerified: isTrue(info.email_verified),
    ...nameParts(info.given_name, info.family_name, info.name),
  };
};

const GithubUser = z.object({ id: z.int(), name: z.nullish(z.string()) });
const GithubEmails = z.array(z.object({ email: z.string(), primary: z.boolean(), verified: z.boolean() }));

/** GitHub's REST API with the user's token, as its documentation asks (API version, JSON media type). */
const githubGet = async (apiUrl: string, path: string, token: string): Promise<unknown> => {
  const response = await fetch(`${apiUrl.replace(/\/+$/, '')}${path}`, {
    headers: {
      authorization: `Bearer ${token}`,
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
      'user-agent': 'Roster',
    },
    signal: AbortSignal.timeout(PROVIDER_TIMEOUT_SECONDS * 1000),
    redirect: 'error',
  });
  if (!response.ok) throw new ProviderRefused(`GitHub answered ${response.status} to ${path}`);
  return response.json();
};

const githubProfile = async (
  p: Extract<Provider, { type: 'github' }>,
  client: oidc.Configuration,
  currentUrl: URL,
  checks: FlowChecks,
): Promise<ProviderProfile> => {
  const tokens = await oidc.authorizationCodeGrant(client, currentUrl, {
    pkceCodeVerifier: checks.verifier,
    expectedState: checks.state,
    idTokenExpected: false,
  });
  const [user, emails] = await Promise.all([
    githubGet(p.apiUrl, '/user', tokens.access_token).then((body) => GithubUser.parse(body)),
    githubGet(p.apiUrl, '/user/emails', tokens.access_token).then((body) => GithubEmails.parse(body)),
  ]);
  // The primary address, verified or not: a verified secondary one is not who the person says they are.
  const primary = emails.find((e) => e.primary);
  if (!primary) throw new ProviderRefused('the GitHub account has no primary e-mail address');
  return {
    subject: String(user.id),
    email: addressOf(primary.email),
    emailVerified: primary.verified,
    ...nameParts(undefined, undefined, user.name),
  };
};

/**
 * The profile behind the provider's answer at `currentUrl` (Roster's callback URL with the
 * provider's query). Throws ProviderRefused for any answer that does not check, whatever the
 * library's reason (wrong state, a code used or not for this verifier, an ID token for another
 * issuer, audience or nonce, or expired) and for a provider that cannot be reached in time.
 */
export const profileFrom = async (p: Provider, currentUrl: URL, checks: FlowChecks): Promise<ProviderProfile> => {
  try {
    const client = await confidentialClient(p);
    return p.type === 'github' ? await githubProfile(p, client, currentUrl, checks) : await oidcProfile(client, currentUrl, checks);
  } catch (error) {
    if (error instanceof ProviderRefused) throw error;
    const refused = new ProviderRefused(error instanceof Error ? `${error.name}: ${error.message}` : 'refused');
    refused.cause = error;
    throw refused;
  }
};
