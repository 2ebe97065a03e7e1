import * as z from 'zod/mini';

/** Where the browser goes to sign in at the provider (a link's start answers it; auth-js navigates to it). */
export const ProviderUrlSchema = z.strictObject({ url: z.url() });

/**
 * What a provider sign-in and a link read (docs/sso.md), in the seed's names (camelCase) and in
 * GoTrue's (snake_case, as auth-js's signInWithOAuth, linkIdentity and exchangeCodeForSession send them).
 */

const ProviderName = z.string({ error: 'must be a string' }).check(z.regex(/^[a-z][a-z0-9-]{0,31}$/, { error: 'must name a provider' }));

/** An absolute URL, bounded: whether it is allowed is the configured list's to say. */
const RedirectUrl = z.string({ error: 'must be a string' }).check(z.maxLength(2048, { error: 'must be at most 2048 characters' }));

/** RFC 7636: 43 to 128 characters of the unreserved set; S256 challenges are 43 base64url. */
const PKCE_VALUE = /^[A-Za-z0-9._~-]{43,128}$/;
const CodeChallenge = z
  .string({ error: 'must be a string' })
  .check(z.regex(PKCE_VALUE, { error: 'must be a PKCE code challenge (RFC 7636)' }));
const CodeVerifier = z
  .string({ error: 'must be a string' })
  .check(z.regex(PKCE_VALUE, { error: 'must be a PKCE code verifier (RFC 7636)' }));
const ChallengeMethod = z.string({ error: 'must be a string' }).check(z.maxLength(10));

/** The one-time code Roster gave the app: 43 base64url characters as issued; anything else simply will not match (410). */
export const ProviderCode = z.string({ error: 'must be a string' }).check(z.maxLength(512, { error: 'must be at most 512 characters' }));

/** GET /api/auth/oauth/{provider}: where to send the browser back, and the app's PKCE challenge. */
export const ProviderStartQuery = z.object({
  redirectTo: z.optional(RedirectUrl),
  codeChallenge: CodeChallenge,
  codeChallengeMethod: z.optional(ChallengeMethod),
});

/** POST /api/auth/identities: link a provider to the signed-in account. */
export const LinkBody = z.object({
  provider: ProviderName,
  redirectTo: z.optional(RedirectUrl),
  codeChallenge: CodeChallenge,
  codeChallengeMethod: z.optional(ChallengeMethod),
});

/** POST /api/auth/oauth/token: the code the browser brought back, and the verifier of its challenge. */
export const ProviderTokenBody = z.object({ code: ProviderCode, codeVerifier: CodeVerifier });

/**
 * GET /auth/v1/authorize and /auth/v1/user/identities/authorize, as auth-js sends them. Without a
 * code challenge GoTrue would answer tokens in the URL's fragment (the implicit flow): Roster does
 * not, and says so (lib/identity/oauth/start.ts).
 */
export const GoTrueAuthorizeQuery = z.object({
  provider: ProviderName,
  redirect_to: z.optional(RedirectUrl),
  code_challenge: z.optional(CodeChallenge),
  code_challenge_method: z.optional(ChallengeMethod),
  skip_http_redirect: z.optional(z.string()),
  scopes: z.optional(z.string().check(z.maxLength(512))),
});

/** One value of the provider's answer, bounded. */
const AnswerValue = z.optional(
  z.string({ error: 'must be a string' }).check(z.maxLength(4096, { error: 'must be at most 4096 characters' })),
);

/**
 * GET /auth/v1/callback: the provider's answer (`code`, `state`, `iss`; or `error`), handed whole to
 * openid-client, which checks it. Only bounded here; other members (Google's `scope`, `authuser`) pass through.
 */
export const CallbackQuery = z.looseObject({
  state: AnswerValue,
  code: AnswerValue,
  iss: AnswerValue,
  error: AnswerValue,
  error_description: AnswerValue,
});

/** What every start of a provider sign-in or link carries, whichever dialect asked. */
export interface ProviderStart {
  provider: string;
  redirectTo?: string | undefined;
  codeChallenge?: string | undefined;
  codeChallengeMethod?: string | undefined;
}

export type ProviderTokenInput = z.infer<typeof ProviderTokenBody>;
export type ProviderStartInput = z.infer<typeof ProviderStartQuery>;
export type LinkInput = z.infer<typeof LinkBody>;
export type GoTrueAuthorizeInput = z.infer<typeof GoTrueAuthorizeQuery>;
