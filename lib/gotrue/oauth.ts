import type { Claims } from '#lib/auth/session-items.ts';
import type { Db } from '#lib/db/service.ts';
import { startLink } from '#lib/identity/oauth/link.ts';
import { GOTRUE_NAMES, startFlow } from '#lib/identity/oauth/start.ts';
import type { GoTrueAuthorizeInput } from '#lib/wire/oauth.ts';

/**
 * Provider sign-in in GoTrue's shapes (docs/sso.md), over Roster's own use cases: auth-js's
 * signInWithOAuth navigates to authorize, linkIdentity fetches the URL (skip_http_redirect) and
 * navigates to it (unlinkIdentity deletes by `identity_id`: the seed's use case as is).
 */

const startOf = (query: GoTrueAuthorizeInput) => ({
  provider: query.provider,
  redirectTo: query.redirect_to,
  codeChallenge: query.code_challenge,
  codeChallengeMethod: query.code_challenge_method,
});

/** GET /auth/v1/authorize: the provider's URL, where the browser is sent. */
export const gotrueAuthorize = (db: Db, query: GoTrueAuthorizeInput, now: Date): Promise<string> =>
  startFlow(db, startOf(query), now, { names: GOTRUE_NAMES });

/** GET /auth/v1/user/identities/authorize: `{ url }` of the provider, for the signed-in account to link it. */
export const gotrueLinkIdentity = (db: Db, claims: Claims, query: GoTrueAuthorizeInput, now: Date) =>
  startLink(db, claims, startOf(query), now, GOTRUE_NAMES);
