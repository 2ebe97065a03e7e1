import type * as z from 'zod/mini';
import type { ErrorCode } from '../errors.ts';
import type { RouteName } from '../http/routes.ts';
import {
  AuditEntrySchema,
  AuthSessionSchema,
  BulkInviteResultsSchema,
  EmptySchema,
  InviteSchema,
  JwksSchema,
  MemberSchema,
  MembershipSchema,
  SessionInfoSchema,
  TeamSchema,
  TransferSchema,
  UserSchema,
  WebhookEndpointCreatedSchema,
  WebhookDeliverySchema,
  WebhookEndpointSchema,
  WebhookReplaySchema,
} from '../responses.ts';

/** How a route's success body is shaped. */
export type Success =
  /** `{ "data": <schema> }` */
  | { data: z.ZodMiniType }
  /** `{ "data": [<schema>…] }` with `limit`, `cursor` and the `Link` header. */
  | { page: z.ZodMiniType }
  /** The schema itself, not enveloped (the JWK Set). */
  | { bare: z.ZodMiniType }
  /** Not JSON of ours: the OpenAPI document, the docs page and its assets. */
  | { media: Record<string, { description: string }> };

/** The document's sections, in order. */
export const TAGS = {
  Auth: 'Accounts, sign-in and tokens.',
  Sessions: "The signed-in user's sessions (devices).",
  Teams: 'Teams the user belongs to.',
  Members: "A team's members and their roles: OWNER, ADMIN, MEMBER.",
  'Ownership transfer': "Handing a team's ownership to another member, with their consent.",
  Invites: "A team's invitations, managed by its owners and admins.",
  'My invites': 'Invitations addressed to the signed-in user.',
  Webhooks: "A team's signed webhooks: its audit events POSTed to its own endpoints.",
  Keys: 'Public keys for verifying access tokens elsewhere.',
  Documentation: 'This description and its reference page.',
  Pages: 'The pages behind the links in the e-mails Roster sends.',
} as const;

export interface Operation {
  tag: keyof typeof TAGS;
  summary: string;
  description?: string;
  success: Success;
  /**
   * The route's own error codes. Those every route of its kind can answer (401 for a token, 400,
   * 413, 415 and 422 for a body, 404 for a path parameter, 500 and 503) are added by document.ts.
   */
  errors: readonly ErrorCode[];
  /** A request body to show (the schema says what is allowed). */
  example?: Record<string, unknown>;
}

const writes = ['conflict'] as const;

/** What the document says about each route; the route table says where it is and what it reads. */
export const OPERATIONS = {
  'auth-signup': {
    tag: 'Auth',
    summary: 'Sign up',
    description:
      "Creates an account and signs it in: the answer is the same `data.session` as sign-in. The e-mail is trimmed and lowercased; the 10,000 most common passwords are refused. A link to confirm the address is mailed (`email_confirmed_at` stays null until it is used). With `inviteToken`, the token of an invitation e-mail's link sent to this same address, the account is created confirmed and no link is mailed; a token that does not fit is ignored.",
    success: { data: AuthSessionSchema },
    errors: ['email_taken', 'rate_limited', ...writes],
    example: { email: 'ada@example.com', password: 'correct horse battery staple', firstName: 'Ada', lastName: 'Lovelace' },
  },
  'auth-signin': {
    tag: 'Auth',
    summary: 'Sign in',
    description:
      'Checks the password and opens a session: a short-lived access token (send it as `Authorization: Token <access_token>`) and a refresh token. Repeated failures slow the account down (429 with `Retry-After`), whether or not the password is right.',
    success: { data: AuthSessionSchema },
    errors: ['invalid_credentials', 'rate_limited', ...writes],
    example: { email: 'ada@example.com', password: 'correct horse battery staple' },
  },
  'auth-refresh': {
    tag: 'Auth',
    summary: 'Refresh the access token',
    description:
      'Trades a refresh token for a new access token and a new refresh token (rotation). A retry within 10 seconds gets the same pair; reusing a rotated token later ends the whole session (401). Rotations are limited per session (a few a minute; 429 with `Retry-After`), not per address.',
    success: { data: AuthSessionSchema },
    errors: ['unauthorized', 'rate_limited', ...writes],
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
    errors: ['email_taken', 'rate_limited', ...writes],
    example: { firstName: 'Ada', lastName: 'King' },
  },
  'auth-user-delete': {
    tag: 'Auth',
    summary: 'Delete my account',
    description:
      'Deletes the signed-in account with its current password: its memberships, sessions and personal data go, and the e-mail address is free again. Refused with 409 `sole_owner` (the teams in `fields.teams`) while the user is the only owner of any team. A wrong password is 422 on `fields.currentPassword`.',
    success: { data: EmptySchema },
    errors: ['sole_owner', 'rate_limited', ...writes],
    example: { currentPassword: 'correct horse battery staple' },
  },
  'auth-verify': {
    tag: 'Auth',
    summary: 'Confirm an e-mail address',
    description:
      'Uses the token of a mailed link (sign-up or resend: confirms the address; e-mail change: makes the change, 409 `email_taken` when the new address was taken meanwhile). Each token works once, for the purpose and address it was sent for, until it expires; otherwise 410 `token_expired`, with one message whatever the reason.',
    success: { data: UserSchema },
    errors: ['token_expired', 'email_taken', ...writes],
    example: { token: 'Vt7bS0aN2mW1pQ4xY8zR3cE6fH9jK5lU0oI2dA7sG1e' },
  },
  'auth-verify-resend': {
    tag: 'Auth',
    summary: 'Send the confirmation e-mail again',
    description:
      "Mails a new link to confirm the signed-in user's address (a few an hour per user: 429 with `Retry-After`). An address already confirmed gets nothing and the same answer.",
    success: { data: EmptySchema },
    errors: ['rate_limited', ...writes],
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
    errors: ['token_expired', ...writes],
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
      'The keys that verify access tokens, as a bare RFC 7517 JWK Set (no `data` envelope), cacheable for a minute. Tokens are EdDSA JWTs with `typ: at+jwt` and a `kid`.',
    success: { bare: JwksSchema },
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
  'teams-list': {
    tag: 'Teams',
    summary: 'My teams',
    description: 'The teams the user belongs to, in the order they joined them.',
    success: { page: TeamSchema },
    errors: [],
  },
  'teams-create': {
    tag: 'Teams',
    summary: 'Create a team',
    description: 'The creator becomes its OWNER. Slugs are unique across all teams.',
    success: { data: TeamSchema },
    errors: ['slug_taken', ...writes],
    example: { name: 'Acme', slug: 'acme' },
  },
  'teams-get': {
    tag: 'Teams',
    summary: 'A team',
    description: 'Any member may read it; to anyone else it does not exist (404).',
    success: { data: TeamSchema },
    errors: ['not_found'],
  },
  'teams-update': {
    tag: 'Teams',
    summary: 'Update a team',
    description: 'OWNER or ADMIN. A new slug frees the old one in the same transaction.',
    success: { data: TeamSchema },
    errors: ['not_found', 'forbidden', 'slug_taken', ...writes],
    example: { name: 'Acme Inc', slug: 'acme-inc' },
  },
  'teams-delete': {
    tag: 'Teams',
    summary: 'Delete a team',
    description: 'OWNER only. The slug is free at once; members and invites go with the team.',
    success: { data: EmptySchema },
    errors: ['not_found', 'forbidden', ...writes],
  },
  'audit-list': {
    tag: 'Teams',
    summary: "A team's audit log",
    description:
      'OWNER and ADMIN only (403 for a MEMBER). Every change to the team, its members, its invites and its ownership, newest first: who (`actor`), what (`action`, `target`), the fields before and after (`changes`), and the request it came with (`requestId`, `sourceIp`). `action` keeps one kind of entry. Each entry is written in the same transaction as its change, and kept for a year (`AUDIT_RETENTION_DAYS`).',
    success: { page: AuditEntrySchema },
    errors: ['forbidden', 'not_found'],
  },
  'webhooks-create': {
    tag: 'Webhooks',
    summary: 'Register a webhook endpoint',
    description:
      'OWNER or ADMIN (403 for a MEMBER). `events` names the audit actions to send (`GET /api/teams/{slug}/audit` lists what each means), each once. The answer shows the Standard Webhooks signing secret (`whsec_…`) this once: keep it to verify `webhook-signature`. `url` must be https, without a user name or password, at most 2048 characters, and its host must resolve only to public addresses: loopback, private, link-local, shared, unique-local, multicast, documentation and other reserved addresses are refused with 422 on `url`, as literal addresses are. A team has at most 10 endpoints (422). Each subscribed event is POSTed to it, signed, and retried for about 28 hours: see docs/webhooks.md.',
    success: { data: WebhookEndpointCreatedSchema },
    errors: ['not_found', 'forbidden', ...writes],
    example: { url: 'https://hooks.example.com/roster', events: ['member.role_changed', 'member.removed'] },
  },
  'webhooks-list': {
    tag: 'Webhooks',
    summary: "A team's webhook endpoints",
    description: 'OWNER or ADMIN (403 for a MEMBER), in creation order. Secrets are not listed.',
    success: { page: WebhookEndpointSchema },
    errors: ['not_found', 'forbidden'],
  },
  'webhooks-delete': {
    tag: 'Webhooks',
    summary: 'Delete a webhook endpoint',
    description: 'OWNER or ADMIN (403 for a MEMBER). Nothing more is sent to it; its secret is gone with it.',
    success: { data: EmptySchema },
    errors: ['not_found', 'forbidden', ...writes],
  },
  'webhooks-deliveries': {
    tag: 'Webhooks',
    summary: "A webhook endpoint's delivery log",
    description:
      "OWNER or ADMIN (403 for a MEMBER). Every delivery attempt to the endpoint, newest first, kept 30 days (`WEBHOOK_DELIVERY_LOG_DAYS`): the event (`eventId` is the message's `webhook-id`), the attempt's number, the receiver's status or the error, the time taken, and when the next attempt is due. A failed message is tried 8 times over about 28 hours (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h apart), then set aside in the dead-letter queue. 404 for an endpoint that is not this team's.",
    success: { page: WebhookDeliverySchema },
    errors: ['not_found', 'forbidden'],
  },
  'webhooks-replay': {
    tag: 'Webhooks',
    summary: 'Send a delivered event again',
    description:
      "OWNER or ADMIN (403 for a MEMBER). Queues the event of that delivery to the same endpoint again, as a new message with the same `webhook-id` and a fresh signature; its attempts count from 1 and are logged with `replay: true`. 200 once it is queued (not yet sent), as CONTRACT.md answers every POST that creates no resource. 404 when the endpoint, the delivery or the event (past the audit log's retention) is gone. At most 60 replays per team per hour (`WEBHOOK_REPLAYS_PER_TEAM_HOUR`), then 429 with `Retry-After`.",
    success: { data: WebhookReplaySchema },
    errors: ['not_found', 'forbidden', 'rate_limited', ...writes],
  },
  'members-list': {
    tag: 'Members',
    summary: "A team's members",
    description: 'Any member may list them, in join order.',
    success: { page: MemberSchema },
    errors: ['not_found'],
  },
  'members-update-role': {
    tag: 'Members',
    summary: "Change a member's role",
    description: 'OWNER: any role. ADMIN: between ADMIN and MEMBER, for members who are not owners. A team keeps at least one OWNER.',
    success: { data: MembershipSchema },
    errors: ['not_found', 'forbidden', 'last_owner', ...writes],
    example: { role: 'ADMIN' },
  },
  'members-remove': {
    tag: 'Members',
    summary: 'Remove a member',
    description: 'OWNER: anyone. ADMIN: MEMBERs. Anyone may leave. A team keeps at least one OWNER.',
    success: { data: EmptySchema },
    errors: ['not_found', 'forbidden', 'last_owner', ...writes],
  },
  'transfer-create': {
    tag: 'Ownership transfer',
    summary: 'Nominate a member as owner',
    description:
      "OWNER only. Proposes to hand the caller's ownership to another member (`memberId`, the id `GET /api/teams/{slug}/members` lists): on acceptance the nominee becomes OWNER and the caller ADMIN. A team has at most one open transfer: a new nomination replaces it. It can be accepted for 7 days. The nominee is told by e-mail, which counts against the team's hourly mail allowance like an invitation (429). Nominating yourself or an OWNER is 422 on `memberId`; 409 `conflict` when the nominee's role or yours changed meanwhile.",
    success: { data: TransferSchema },
    errors: ['not_found', 'forbidden', 'rate_limited', ...writes],
    example: { memberId: 1764751234901 },
  },
  'transfer-accept': {
    tag: 'Ownership transfer',
    summary: 'Accept the ownership transfer',
    description:
      'The nominee only (403 for any other member). In one transaction the nominee becomes OWNER and the nominating owner ADMIN, only if both still hold the roles they had when nominated: otherwise 409 `transfer_stale` (nominate again). No open transfer, or an expired one: 404.',
    success: { data: EmptySchema },
    errors: ['not_found', 'forbidden', 'transfer_stale', ...writes],
  },
  'transfer-decline': {
    tag: 'Ownership transfer',
    summary: 'Decline the ownership transfer',
    description: 'The nominee only (403 for any other member). Ends the transfer; nothing else changes. No open transfer: 404.',
    success: { data: EmptySchema },
    errors: ['not_found', 'forbidden', ...writes],
  },
  'transfer-cancel': {
    tag: 'Ownership transfer',
    summary: 'Withdraw the ownership transfer',
    description: 'The nominating owner only (403 for any other member). Ends the transfer; nothing else changes. No open transfer: 404.',
    success: { data: EmptySchema },
    errors: ['not_found', 'forbidden', ...writes],
  },
  'invites-create': {
    tag: 'Invites',
    summary: 'Invite someone',
    description:
      'OWNER or ADMIN (an ADMIN cannot invite an OWNER), with a confirmed e-mail address (403 `email_not_verified`; setting INVITES_REQUIRE_VERIFIED_EMAIL). Inviting an address that has a pending invite updates that invite. An e-mail goes to the address; each team may send 50 an hour and each user 100 an hour across all teams (429). Only e-mails sent count: a refused invite (409, 422) spends nothing. An address whose mail bounced for good or was marked as spam is refused with 422 on `email`.',
    success: { data: EmptySchema },
    errors: ['not_found', 'forbidden', 'email_not_verified', 'already_member', 'rate_limited', ...writes],
    example: { email: 'grace@example.com', role: 'MEMBER' },
  },
  'invites-bulk': {
    tag: 'Invites',
    summary: 'Invite up to 100 addresses at once',
    description:
      "Each row of `invites` is an invite of its own, `{ \"email\", \"role\" }` as `POST /api/teams/{slug}/invites` takes it, with the same rules, and gets the answer that endpoint would give it: the result row has its `status` (201 and the `invite` as the team's list shows it; else 400, 403, 409, 422, 429, 500 or 503 with `code`, `message` and `fields`). Rows succeed or fail on their own, never all or nothing; the results are in the rows' order. A row whose address (trimmed, lowercased) repeats an earlier row's is refused with 422. Each e-mail sent counts against the team's and the caller's hourly allowances, row by row: once one is spent, the remaining rows are refused with 429. The whole request is refused only when `invites` is not a list of 1 to 100 rows (400, 422), the team is unknown to the caller (404), or the caller may not invite at all (403: not OWNER or ADMIN, or an unconfirmed address).",
    success: { data: BulkInviteResultsSchema },
    errors: ['not_found', 'forbidden', 'email_not_verified'],
    example: {
      invites: [
        { email: 'grace@example.com', role: 'MEMBER' },
        { email: 'alan@example.com', role: 'ADMIN' },
      ],
    },
  },
  'invites-list': {
    tag: 'Invites',
    summary: "A team's pending invites",
    description: 'OWNER or ADMIN. Expired invites are not listed.',
    success: { page: InviteSchema },
    errors: ['not_found', 'forbidden'],
  },
  'invites-get': {
    tag: 'Invites',
    summary: 'A pending invite of the team',
    success: { data: InviteSchema },
    errors: ['not_found', 'forbidden'],
  },
  'invites-resend': {
    tag: 'Invites',
    summary: 'Send an invite again',
    description:
      'Mails a pending invite again and extends its expiry by 7 days, under the same rights, confirmed-address rule and mail allowances as a new invite. If mail to its address has since bounced for good or been marked as spam, the answer is 422 on `email`, as for a new invite.',
    success: { data: EmptySchema },
    errors: ['not_found', 'forbidden', 'email_not_verified', 'validation_failed', 'rate_limited', ...writes],
  },
  'invites-delete': {
    tag: 'Invites',
    summary: 'Revoke an invite',
    success: { data: EmptySchema },
    errors: ['not_found', 'forbidden', ...writes],
  },
  'my-invites-list': {
    tag: 'My invites',
    summary: 'Invites addressed to me',
    description:
      "Pending, unexpired invites to the signed-in user's e-mail address: the account's current one (after a confirmed e-mail change, the new one, whatever the access token's `email` claim says). Needs a confirmed e-mail address (403 `email_not_verified`; setting INVITES_REQUIRE_VERIFIED_EMAIL).",
    success: { page: InviteSchema },
    errors: ['email_not_verified'],
  },
  'my-invites-get': {
    tag: 'My invites',
    summary: 'An invite addressed to me',
    description:
      'Needs a confirmed e-mail address. Checks, in order: 404 no such invite, 403 addressed to another e-mail than the account’s current one, 403 `email_not_verified`, 404 team gone, 409 no longer pending, 410 expired.',
    success: { data: InviteSchema },
    errors: ['not_found', 'invite_email_mismatch', 'email_not_verified', 'invite_not_pending', 'invite_expired'],
  },
  'invites-accept': {
    tag: 'My invites',
    summary: 'Accept an invite',
    description:
      'Makes the user a member with the invite’s role, in one transaction with ending the invite. Needs a confirmed e-mail address. Checks, in order: 404 no such invite, 403 addressed to another e-mail, 403 `email_not_verified`, 404 team gone, 409 no longer pending, 410 expired.',
    success: { data: EmptySchema },
    errors: [
      'not_found',
      'invite_email_mismatch',
      'email_not_verified',
      'invite_not_pending',
      'invite_expired',
      'already_member',
      ...writes,
    ],
  },
  'invites-decline': {
    tag: 'My invites',
    summary: 'Decline an invite',
    description: 'Needs a confirmed e-mail address; checks in the same order as accepting.',
    success: { data: EmptySchema },
    errors: ['not_found', 'invite_email_mismatch', 'email_not_verified', 'invite_not_pending', 'invite_expired', ...writes],
  },
  'page-invite': {
    tag: 'Pages',
    summary: 'The page an invitation links to',
    description:
      "With the e-mail's live `token` for this invite: shows the team, the inviter, the role, the address and the expiry, then lets the invitee sign in or sign up (which confirms the address) and accept or decline. Any other link (unknown or malformed UUID, no or another token, an answered, withdrawn or expired invite, a deleted team) answers 200 with one page saying the invitation cannot be used, whatever the reason. Showing it changes nothing.",
    success: { media: { 'text/html': { description: 'The page.' } } },
    errors: [],
  },
  'page-verify': {
    tag: 'Pages',
    summary: 'The page a confirmation link opens',
    description:
      "A button that confirms the address with the link's `token` (`POST /api/auth/verify`). Opening it uses nothing up: mail scanners follow links.",
    success: { media: { 'text/html': { description: 'The page.' } } },
    errors: [],
  },
  'page-reset': {
    tag: 'Pages',
    summary: 'The page a password reset link opens',
    description: "A form for the new password that posts the link's `token` to `POST /api/auth/reset`. Opening it uses nothing up.",
    success: { media: { 'text/html': { description: 'The page.' } } },
    errors: [],
  },
  'page-assets': {
    tag: 'Pages',
    summary: 'The script, style sheet and icon of the pages',
    success: {
      media: {
        'text/javascript': { description: "The pages' script." },
        'text/css': { description: "The pages' style sheet." },
        'image/svg+xml': { description: "The pages' icon." },
      },
    },
    errors: ['not_found'],
  },
} as const satisfies Record<RouteName, Operation>;
