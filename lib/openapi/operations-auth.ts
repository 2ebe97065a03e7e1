import type { RouteName } from '#lib/http/routes.ts';
import {
  AuthSessionSchema,
  SignUpAnswerSchema,
  EmptySchema,
  JwksSchema,
  OpenIdConfigurationSchema,
  SessionInfoSchema,
  UserSchema,
} from '#lib/wire/responses.ts';
import { type Operation, WRITES } from './operation.ts';

/** The words of the account, session, key and documentation routes. */
export const AUTH_OPERATIONS = {
  'auth-signup': {
    tag: 'Auth',
    summary: 'Sign up',
    description:
      "Creates an account and signs it in: the answer is the same `data.session` as sign-in. The e-mail is trimmed and lowercased; the 10,000 most common passwords are refused. A link to confirm the address is mailed (`email_confirmed_at` stays null until it is used). With `inviteToken`, the token of an invitation e-mail's link sent to this same address, the account is created confirmed and no link is mailed; a token that does not fit is ignored. A deployment with `CONCEAL_ACCOUNTS=true` answers 201 `{ session: null, user }` instead, for a new address and for one an account holds alike (never 409): the account signs in once its address is confirmed, and the owner of an address in use is mailed instead.",
    success: { data: SignUpAnswerSchema },
    errors: ['email_taken', 'rate_limited', ...WRITES],
    example: { email: 'ada@example.com', password: 'correct horse battery staple', firstName: 'Ada', lastName: 'Lovelace' },
  },
  'auth-signin': {
    tag: 'Auth',
    summary: 'Sign in',
    description:
      'Checks the password and opens a session: a short-lived access token (send it as `Authorization: Token <access_token>`) and a refresh token. Repeated failures slow the account down (429 with `Retry-After`), whether or not the password is right.',
    success: { data: AuthSessionSchema },
    errors: ['invalid_credentials', 'rate_limited', ...WRITES],
    example: { email: 'ada@example.com', password: 'correct horse battery staple' },
  },
  'auth-refresh': {
    tag: 'Auth',
    summary: 'Refresh the access token',
    description:
      'Trades a refresh token for a new access token and a new refresh token (rotation). A retry within 10 seconds gets the same pair; reusing a rotated token later ends the whole session (401). Rotations are limited per session (a few a minute; 429 with `Retry-After`), not per address.',
    success: { data: AuthSessionSchema },
    errors: ['unauthorized', 'rate_limited', ...WRITES],
    example: { refresh_token: 'Yp1xR0m8pXz2vS3bQ9cH4kL7tN6wE5aJ1fU0iO2gD8s' },
  },
  'auth-signout': {
    tag: 'Auth',
    summary: 'Sign out',
    description: 'Ends the current session, or with `?scope=global` every session of the user. Its tokens stop working at once.',
    success: { data: EmptySchema },
    errors: [],
  },
  'auth-user': {
    tag: 'Auth',
    summary: 'The signed-in user',
    success: { data: UserSchema },
    errors: [],
  },
  'auth-user-update': {
    tag: 'Auth',
    summary: 'Update the signed-in user',
    description:
      "Changes `firstName`, `lastName`, the password or the e-mail address (the last two with `currentPassword`, which a wrong value fails with 422 on `fields.currentPassword`). A password change ends every other session and voids the links mailed before it. A new `email` is not the account's yet: the answer shows it as `new_email`, a confirmation link goes to it and a notice to the current address; `POST /api/auth/verify` with that link's token makes the change. An address another account has is refused with 409 `email_taken`, the current one with 422 on `email`; a few confirmation e-mails an hour per address and per user (429 with `Retry-After`).",
    success: { data: UserSchema },
    errors: ['email_taken', 'mfa_required', 'rate_limited', ...WRITES],
    example: { firstName: 'Ada', lastName: 'King' },
  },
  'auth-user-delete': {
    tag: 'Auth',
    summary: 'Delete my account',
    description:
      'Deletes the signed-in account with its current password: its memberships, sessions and personal data go, and the e-mail address is free again. Refused with 409 `sole_owner` (the teams in `fields.teams`) while the user is the only owner of any team. A wrong password is 422 on `fields.currentPassword`.',
    success: { data: EmptySchema },
    errors: ['sole_owner', 'mfa_required', 'rate_limited', ...WRITES],
    example: { currentPassword: 'correct horse battery staple' },
  },
  'auth-verify': {
    tag: 'Auth',
    summary: 'Confirm an e-mail address',
    description:
      'Uses the token of a mailed link (sign-up or resend: confirms the address; e-mail change: makes the change, 409 `email_taken` when the new address was taken meanwhile). Each token works once, for the purpose and address it was sent for, until it expires; otherwise 410 `token_expired`, with one message whatever the reason.',
    success: { data: UserSchema },
    errors: ['token_expired', 'email_taken', ...WRITES],
    example: { token: 'Vt7bS0aN2mW1pQ4xY8zR3cE6fH9jK5lU0oI2dA7sG1e' },
  },
  'auth-verify-resend': {
    tag: 'Auth',
    summary: 'Send the confirmation e-mail again',
    description:
      "Mails a new link to confirm the signed-in user's address (a few an hour per user: 429 with `Retry-After`). An address already confirmed gets nothing and the same answer.",
    success: { data: EmptySchema },
    errors: ['rate_limited', ...WRITES],
  },
  'auth-recover': {
    tag: 'Auth',
    summary: 'Ask for a password reset link',
    description:
      'Always answers 200 with `{}`, whether or not an account has the address: a known address is mailed a link to reset the password (valid for an hour). A few an hour per address (429 with `Retry-After`, known or not), and a ceiling per source network.',
    success: { data: EmptySchema },
    errors: ['rate_limited'],
    example: { email: 'ada@example.com' },
  },
  'auth-reset': {
    tag: 'Auth',
    summary: 'Reset the password',
    description:
      'Sets a new password with the token of a reset link (the sign-up rules apply), confirms the address the link was sent to, ends every session of the user, and answers a new session like sign-in. An unknown, used or expired token is 410 `token_expired`.',
    success: { data: AuthSessionSchema },
    errors: ['token_expired', ...WRITES],
    example: { token: 'Vt7bS0aN2mW1pQ4xY8zR3cE6fH9jK5lU0oI2dA7sG1e', password: 'a new long passphrase' },
  },
  'auth-sessions-list': {
    tag: 'Sessions',
    summary: "The user's sessions",
    description:
      'Live sessions, oldest first, paged; `current` marks the one this token belongs to. A user holds at most 100 sessions (configurable): signing in past that ends the oldest.',
    success: { page: SessionInfoSchema },
    errors: [],
  },
  'auth-sessions-delete': {
    tag: 'Sessions',
    summary: 'End a session',
    description: "Ends one of the user's own sessions (another user's session id is 404).",
    success: { data: EmptySchema },
    errors: ['not_found'],
  },
  jwks: {
    tag: 'Keys',
    summary: 'Public signing keys (JWK Set)',
    description:
      'The keys that verify access tokens, as a bare RFC 7517 JWK Set (no `data` envelope), cacheable for a minute. Tokens are RS256 JWTs (EdDSA or ES256 where the deployment chose them) with `typ: at+jwt` and a `kid`.',
    success: { bare: JwksSchema },
    errors: [],
  },
  'openid-configuration': {
    tag: 'Keys',
    summary: 'OpenID discovery document',
    description:
      "The issuer's OpenID Connect discovery document: `issuer` (the tokens' `iss`) and `jwks_uri`, which is what API Gateway's JWT authorizers and libraries such as aws-jwt-verify read to find the keys (docs/protect-your-api.md). Bare, cacheable for an hour. Roster issues access tokens, not ID tokens: there is no authorization endpoint.",
    success: { bare: OpenIdConfigurationSchema },
    errors: [],
  },
  openapi: {
    tag: 'Documentation',
    summary: 'This document',
    success: { media: { 'application/json': { description: 'The OpenAPI 3.1 document of this API.' } } },
    errors: [],
  },
  docs: {
    tag: 'Documentation',
    summary: 'The API reference page',
    description: 'This document rendered by Swagger UI, served with its assets by Roster itself.',
    success: { media: { 'text/html': { description: 'The page.' } } },
    errors: [],
  },
  'docs-assets': {
    tag: 'Documentation',
    summary: 'A file of the API reference page',
    success: {
      media: {
        'text/javascript': { description: 'Swagger UI and the script that starts it.' },
        'text/css': { description: "Swagger UI's style sheet." },
      },
    },
    errors: ['not_found'],
  },
} as const satisfies Partial<Record<RouteName, Operation>>;
