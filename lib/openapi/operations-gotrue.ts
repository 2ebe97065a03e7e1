import type { RouteName } from '#lib/http/routes.ts';
import { GoTrueSessionSchema, GoTrueSettingsSchema, GoTrueSignUpAnswerSchema, GoTrueUserSchema } from '#lib/wire/gotrue.ts';
import { EmptySchema, JwksSchema } from '#lib/wire/responses.ts';
import type { Operation } from './operation.ts';

/**
 * The words of the Supabase-compatible routes (docs/supabase.md). Their `errors` are Roster's codes,
 * which the document lists as GoTrue's (lib/http/gotrue-errors.ts).
 */
export const GOTRUE_OPERATIONS = {
  'gotrue-signup': {
    tag: 'Supabase-compatible',
    summary: 'Sign up (GoTrue)',
    description:
      'As `POST /api/auth/signup`: the account is created and signed in at once (its address unconfirmed until the mailed link is used); `data.firstName` and `data.lastName` are its names (empty without them), the rest of `data` its user_metadata. Answers the session, bare; with `CONCEAL_ACCOUNTS=true`, the user alone (as GoTrue does when confirmations come first), for a new address and for one an account holds alike (never `user_already_exists`).',
    success: { bare: GoTrueSignUpAnswerSchema },
    errors: ['email_taken', 'rate_limited', 'conflict'],
    example: { email: 'ada@example.com', password: 'correct horse battery staple', data: { firstName: 'Ada', lastName: 'Lovelace' } },
  },
  'gotrue-token': {
    tag: 'Supabase-compatible',
    summary: 'Sign in, refresh or trade a code (GoTrue)',
    description:
      "`?grant_type=password` with `email` and `password` signs in as `POST /api/auth/signin`; `?grant_type=refresh_token` with `refresh_token` refreshes as `POST /api/auth/refresh`; `?grant_type=pkce` with `auth_code` and `code_verifier` trades a provider sign-in's code as `POST /api/auth/oauth/token` (auth-js's exchangeCodeForSession). Answers the session, bare.",
    success: { bare: GoTrueSessionSchema },
    errors: ['invalid_credentials', 'unauthorized', 'rate_limited', 'token_expired', 'identity_already_exists', 'conflict'],
    example: { email: 'ada@example.com', password: 'correct horse battery staple' },
  },
  'gotrue-user': {
    tag: 'Supabase-compatible',
    summary: 'The signed-in user (GoTrue)',
    success: { bare: GoTrueUserSchema },
    errors: [],
  },
  'gotrue-user-update': {
    tag: 'Supabase-compatible',
    summary: 'Update the signed-in user (GoTrue)',
    description:
      '`data` updates the names (`firstName`, `lastName`) and merges the rest into user_metadata (at most 20 keys, 2 KB). A new `password` or `email` needs `current_password`, unless the session was opened in the last 15 minutes (a sign-in, or a reset link just used): an old session a thief may hold cannot change them. A new address is pending until its link is used, as on `PUT /api/auth/user`. No phone numbers.',
    success: { bare: GoTrueUserSchema },
    errors: ['email_taken', 'mfa_required', 'rate_limited', 'conflict'],
    example: { data: { firstName: 'Ada', company: 'Analytical Engines' } },
  },
  'gotrue-logout': {
    tag: 'Supabase-compatible',
    summary: 'Sign out (GoTrue)',
    description:
      '`?scope=global` (the default, as GoTrue) ends every session of the user, `local` the current one, `others` all but the current one.',
    success: { bare: EmptySchema },
    errors: [],
  },
  'gotrue-recover': {
    tag: 'Supabase-compatible',
    summary: 'Mail a password reset link (GoTrue)',
    description:
      "As `POST /api/auth/recover`: the same answer whether or not an account has the address. The link opens Roster's reset page; its `token` is a `token_hash` for `POST /auth/v1/verify` with `type: recovery`.",
    success: { bare: EmptySchema },
    errors: ['rate_limited'],
    example: { email: 'ada@example.com' },
  },
  'gotrue-resend': {
    tag: 'Supabase-compatible',
    summary: 'Mail the confirmation link again (GoTrue)',
    description:
      '`type: signup` with `email`: a new confirmation link, sent only to an account of that address that is not confirmed yet; the same answer either way. Roster resends nothing else by address.',
    success: { bare: EmptySchema },
    errors: ['rate_limited'],
    example: { type: 'signup', email: 'ada@example.com' },
  },
  'gotrue-verify': {
    tag: 'Supabase-compatible',
    summary: "Use a mailed link's token (GoTrue)",
    description:
      "`token_hash` is the `token` of a link Roster mailed: `type` `signup`, `email` or `email_change` confirms the address (as `POST /api/auth/verify`), `recovery` is a reset link. Either way the link's holder is signed in (the session's `amr` says `otp` or `recovery`), and the link is used up. Six-digit codes, magic links and invite links are not Roster's.",
    success: { bare: GoTrueSessionSchema },
    errors: ['token_expired', 'email_taken', 'conflict'],
    example: { type: 'signup', token_hash: 'kq1xR0m8pXz2vS3bQ9cH4kL7tN6wE5aJ1fU0iO2gD8s' },
  },
  'gotrue-jwks': {
    tag: 'Supabase-compatible',
    summary: 'Public signing keys (GoTrue path)',
    description: 'The JWK Set of `/.well-known/jwks.json`, where auth-js `getClaims()` looks for it.',
    success: { bare: JwksSchema },
    errors: [],
  },
  'gotrue-settings': {
    tag: 'Supabase-compatible',
    summary: 'What this deployment offers (GoTrue)',
    success: { bare: GoTrueSettingsSchema },
    errors: [],
  },
} as const satisfies Partial<Record<RouteName, Operation>>;
