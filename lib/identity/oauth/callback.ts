import { type ProviderProfile, ProviderRefused, profileFrom } from '#lib/auth/oauth-profiles.ts';
import { providerNamed } from '#lib/core/oauth-settings.ts';
import { hashOpaqueToken, newOpaqueToken } from '#lib/auth/opaque-tokens.ts';
import { AppError } from '#lib/core/errors.ts';
import { log, noteRequest } from '#lib/core/log.ts';
import { EVENT_METRICS } from '#lib/core/metric-names.ts';
import { recordEvent } from '#lib/core/metrics.ts';
import { expirySeconds, isoMillis } from '#lib/core/time.ts';
import type { Db } from '#lib/db/service.ts';
import { isConditionFailure } from '#lib/db/transactions.ts';
import { type CodeWrites, type Refusal, type Resolved, signInWith } from './accounts.ts';
import { callbackUrl } from './start.ts';

/**
 * The provider's answer (GET /auth/v1/callback, docs/sso.md): the flow its `state` names is used
 * up, the provider's code traded and its answer checked (openid-client), the account found, made
 * or linked (accounts.ts), and the browser sent back to the app with a one-time code, or with
 * GoTrue's `error`, `error_code` and `error_description` when refused.
 */

/** How long the app has to trade the code (GoTrue's flow state lasts five minutes; the browser is already on its way). */
export const CODE_MINUTES = 5;

const expired = () => new AppError('token_expired', 'This sign-in has expired or was finished already: start it again from the app.');

const DESCRIPTIONS: Record<Refusal | 'access_denied', string> = {
  provider_email_needs_verification: 'The provider does not vouch for this e-mail address: verify it there first.',
  email_exists:
    'An account with this e-mail address exists and this sign-in cannot be linked to it safely: sign in to it (or reset its password, which proves the address), then link the provider from the account.',
  too_many_identities: 'This account has as many linked identities as it may: unlink one first.',
  bad_oauth_callback: "The provider's answer could not be checked: try again.",
  access_denied: 'The sign-in at the provider was not completed.',
};

/** The app's URL with `params` added to its query (its own query kept). */
const back = (redirectTo: string, params: Record<string, string>): string => {
  const url = new URL(redirectTo);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return url.toString();
};

const refusedTo = (redirectTo: string, code: Refusal | 'access_denied'): string =>
  back(redirectTo, {
    error: code === 'bad_oauth_callback' ? 'server_error' : 'access_denied',
    error_code: code,
    error_description: DESCRIPTIONS[code],
  });

/** The flow `state` names, used up: whatever happens next, the same answer cannot be brought back twice. */
const useFlow = async (db: Db, state: string | undefined, now: Date) => {
  if (state === undefined || state === '' || state.length > 512) throw expired();
  const flow = await db.entities.oauthFlow
    .remove({ stateHash: hashOpaqueToken(state) })
    .go({ response: 'all_old' })
    .then(({ data }) => data)
    .catch((error: unknown) => {
      if (isConditionFailure(error)) return null;
      throw error;
    });
  if (!flow || flow.expiresAt <= now.getTime()) throw expired();
  return { ...flow, state };
};

/**
 * Finishes the flow and answers where the browser goes next. Throws `token_expired` only when no
 * live flow matches `state` (there is then no app to send the browser back to).
 */
export const finishFlow = async (db: Db, rawQuery: string, now: Date): Promise<string> => {
  const query = new URLSearchParams(rawQuery);
  const flow = await useFlow(db, query.get('state') ?? undefined, now);
  const provider = providerNamed(flow.provider);
  if (!provider) throw expired();
  if (query.has('error')) {
    log.info('provider sign-in not completed', { provider: provider.id, error: query.get('error')?.slice(0, 64) });
    return refusedTo(flow.redirectTo, 'access_denied');
  }
  let profile: ProviderProfile;
  try {
    profile = await profileFrom(provider, new URL(`${callbackUrl()}?${rawQuery}`), flow);
  } catch (error) {
    if (!(error instanceof ProviderRefused)) throw error;
    log.info('provider sign-in refused', { provider: provider.id, reason: error.message });
    recordEvent(EVENT_METRICS.signInFailed);
    return refusedTo(flow.redirectTo, 'bad_oauth_callback');
  }
  const code = newOpaqueToken();
  const expiresAt = now.getTime() + CODE_MINUTES * 60_000;
  const item = (userUuid: string) => ({
    codeHash: hashOpaqueToken(code),
    userUuid,
    provider: provider.id,
    codeChallenge: flow.codeChallenge,
    createdAt: isoMillis(now),
    expiresAt,
    ttl: expirySeconds(expiresAt),
  });
  const writes: CodeWrites = {
    inTx: (tx, userUuid) => tx.oauthCode.create(item(userUuid)).commit(),
    alone: (userUuid) => db.entities.oauthCode.create(item(userUuid)).go(),
  };
  let resolved: Resolved;
  if (flow.linkUserUuid === undefined) resolved = await signInWith(db, provider.id, profile, writes, now);
  else if (!profile.emailVerified) resolved = { refused: 'provider_email_needs_verification' };
  else {
    // A link is made when its code is traded, by the app that started it (exchange.ts): never here.
    const { subject, email, firstName, lastName } = profile;
    await db.entities.oauthCode.create({ ...item(flow.linkUserUuid), link: { subject, email, firstName, lastName } }).go();
    resolved = { userUuid: flow.linkUserUuid };
  }
  if ('refused' in resolved) {
    log.info('provider sign-in refused', { provider: provider.id, reason: resolved.refused });
    recordEvent(EVENT_METRICS.signInFailed);
    return refusedTo(flow.redirectTo, resolved.refused);
  }
  noteRequest({ userId: resolved.userUuid });
  return back(flow.redirectTo, { code });
};
