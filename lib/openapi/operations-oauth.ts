import type { RouteName } from '#lib/http/routes.ts';
import { ProviderUrlSchema } from '#lib/wire/oauth.ts';
import { AuthSessionSchema, EmptySchema, IdentityListSchema } from '#lib/wire/responses.ts';
import type { Operation } from './operation.ts';

const BACK =
  "Then the provider sends the browser to `GET /auth/v1/callback`, which sends it to the redirect URL with `code` (trade it within five minutes with the verifier of your challenge), or with GoTrue's `error`, `error_code` and `error_description` (docs/sso.md lists the codes).";

/** Provider sign-in and the identities of an account (docs/sso.md). */
export const OAUTH_OPERATIONS = {
  'auth-oauth-authorize': {
    tag: 'Provider sign-in',
    summary: 'Sign in at a provider',
    description: `Open this in the browser (not with fetch): it sends the browser to the provider's sign-in page. \`redirectTo\` must be one of the deployment's redirect URLs (OAUTH_REDIRECT_URLS; a query of your own is kept), else the first of them; \`codeChallenge\` is the S256 PKCE challenge of a verifier your app keeps. ${BACK}`,
    success: { redirect: "302 to the provider's sign-in page." },
    errors: [],
  },
  'auth-oauth-token': {
    tag: 'Provider sign-in',
    summary: 'Trade a provider sign-in code',
    description:
      "Trades the `code` the callback sent the browser back with, and the PKCE `codeVerifier` of the challenge the sign-in started with, for a session (`amr`: `oauth`, aal1). The code works once, right or wrong: an unknown, used, expired or mismatched one is 410 `token_expired`. A link's code links the identity now (another account holding it: 409 `identity_already_exists`; too many: 422).",
    success: { data: AuthSessionSchema },
    errors: ['token_expired', 'identity_already_exists'],
  },
  'auth-identities-list': {
    tag: 'Provider sign-in',
    summary: 'List your identities',
    description: "The ways in to the signed-in account: the password's (`provider: email`) while it has one, and each linked provider's.",
    success: { data: IdentityListSchema },
    errors: [],
  },
  'auth-identities-link': {
    tag: 'Provider sign-in',
    summary: 'Link a provider',
    description: `Starts linking a provider to the signed-in account: answers the provider's URL, to open in the browser. An account with a second factor links from aal2 only (403 \`mfa_required\`). ${BACK} The app trades the code as after a sign-in: the identity is linked then (so a link URL that reaches someone else's browser links nothing), and the session is the same account's. An identity another account holds is refused there (409 \`identity_already_exists\`). \`Idempotency-Key\` is not honoured.`,
    success: { data: ProviderUrlSchema },
    errors: ['mfa_required'],
  },
  'auth-identities-delete': {
    tag: 'Provider sign-in',
    summary: 'Unlink a provider',
    description:
      "Unlinks one of the account's provider identities (by `identity_id`); never the last way in (422 while it has no password and no other identity). An account with a second factor unlinks from aal2 only. The account's address is told.",
    success: { data: EmptySchema },
    errors: ['mfa_required', 'not_found', 'validation_failed', 'conflict'],
  },
  'auth-oauth-callback': {
    tag: 'Provider sign-in',
    summary: "The provider's answer",
    description:
      'Where providers send the browser back (register `{PUBLIC_URL}/auth/v1/callback` with each). Not for apps to call. A `state` that names no live sign-in is 410 `token_expired`: there is no app to send that browser back to.',
    success: { redirect: "302 to the app's redirect URL, with `code` or the refusal." },
    errors: ['token_expired'],
  },
  'gotrue-authorize': {
    tag: 'Supabase-compatible',
    summary: 'Sign in at a provider (GoTrue)',
    description: `auth-js's \`signInWithOAuth({ provider, options: { redirectTo } })\` with \`flowType: 'pkce'\`: as \`GET /api/auth/oauth/{provider}\`. Without \`code_challenge\` (the implicit flow, tokens in the URL) it is refused. ${BACK} auth-js's \`exchangeCodeForSession(code)\` trades it (\`POST /auth/v1/token?grant_type=pkce\`).`,
    success: { redirect: "302 to the provider's sign-in page." },
    errors: [],
  },
  'gotrue-identities-authorize': {
    tag: 'Supabase-compatible',
    summary: 'Link a provider (GoTrue)',
    description: "auth-js's `linkIdentity({ provider })`: as `POST /api/auth/identities`, `{ url }` bare.",
    success: { bare: ProviderUrlSchema },
    errors: ['mfa_required'],
  },
  'gotrue-identities-delete': {
    tag: 'Supabase-compatible',
    summary: 'Unlink a provider (GoTrue)',
    description: "auth-js's `unlinkIdentity(identity)`: as `DELETE /api/auth/identities/{identityId}`.",
    success: { bare: EmptySchema },
    errors: ['mfa_required', 'not_found', 'validation_failed', 'conflict'],
  },
} as const satisfies Partial<Record<RouteName, Operation>>;
