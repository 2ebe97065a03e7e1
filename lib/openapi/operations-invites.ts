import * as z from 'zod/mini';
import type { RouteName } from '#lib/http/routes.ts';
import { BulkInviteResultsSchema, EmptySchema, InviteSchema } from '#lib/wire/responses.ts';
import { type Operation, WRITES } from './operation.ts';

/** The words of the invitation routes, both sides, and of the pages their e-mails link to. */
export const INVITE_OPERATIONS = {
  'invites-create': {
    tag: 'Invites',
    summary: 'Invite someone',
    description:
      'OWNER or ADMIN (an ADMIN cannot invite an OWNER), with a confirmed e-mail address (403 `email_not_verified`; setting INVITES_REQUIRE_VERIFIED_EMAIL). Inviting an address that has a pending invite updates that invite: a live one keeps its expiry and is not mailed again (resend mails it), an expired one is renewed and mailed. An e-mail goes to the address; each team may send 50 an hour, each user 100 an hour across all teams, and each address may be sent one invitation or nomination a minute, 3 an hour and 10 a day from every sender together (429, with `Retry-After`). Only e-mails sent count: a refused invite (409, 422) spends nothing. An address whose mail bounced for good or was marked as spam, or whose owner asked for no more invitations from this team or from anyone (the e-mails’ “no more” link), is refused with 422 on `email`, one answer for all.',
    success: { data: EmptySchema },
    errors: ['not_found', 'forbidden', 'email_not_verified', 'already_member', 'rate_limited', ...WRITES],
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
      'Mails a pending invite again and extends its expiry by 7 days, under the same rights, confirmed-address rule and mail allowances as a new invite. If mail to its address has since bounced for good or been marked as spam, or its owner said no to this team, the answer is 422 on `email`, as for a new invite.',
    success: { data: EmptySchema },
    errors: ['not_found', 'forbidden', 'email_not_verified', 'validation_failed', 'rate_limited', ...WRITES],
  },
  'invites-delete': {
    tag: 'Invites',
    summary: 'Revoke an invite',
    success: { data: EmptySchema },
    errors: ['not_found', 'forbidden', ...WRITES],
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
      'Makes the user a member with the invite’s role, in one transaction with ending the invite. Needs a confirmed e-mail address. Checks, in order: 404 no such invite, 403 addressed to another e-mail, 403 `email_not_verified`, 404 team gone, 409 no longer pending, 410 expired, 403 `mfa_required` (the team requires MFA and this session is aal1).',
    success: { data: EmptySchema },
    errors: [
      'not_found',
      'invite_email_mismatch',
      'email_not_verified',
      'mfa_required',
      'invite_not_pending',
      'invite_expired',
      'already_member',
      ...WRITES,
    ],
  },
  'invites-decline': {
    tag: 'My invites',
    summary: 'Decline an invite',
    description: 'Needs a confirmed e-mail address; checks in the same order as accepting.',
    success: { data: EmptySchema },
    errors: ['not_found', 'invite_email_mismatch', 'email_not_verified', 'invite_not_pending', 'invite_expired', ...WRITES],
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
  'page-unsubscribe': {
    tag: 'Pages',
    summary: 'The page behind the "no more" link of invitations and nominations',
    description:
      "With the e-mail's live `token`: names the address and the team, and offers two buttons, no more invitations or ownership proposals from this team, or from anyone on Roster (each posts to `POST /unsubscribe`). Any other link answers 200 with one page saying the link cannot be used. Showing it changes nothing: mail scanners follow links.",
    success: { media: { 'text/html': { description: 'The page.' } } },
    errors: [],
  },
  unsubscribe: {
    tag: 'Pages',
    summary: 'Stop invitations and nominations to an address (one click)',
    description:
      "The `token` of the e-mail's link in the query. A form body: `scope=team` or `scope=everyone` (the page's buttons), or RFC 8058's `List-Unsubscribe=One-Click` (a mail client's unsubscribe button: this team). Blocks invitations and ownership nominations to the address from the team, or from every team, and writes a `mail.blocked` entry in the team's audit log; a block already in place changes nothing. An invite to a blocked address answers 422 as one to a suppressed address does. Answers a page saying what stopped; a link that cannot be used, the page saying so, and a body that asks for nothing, the page with the buttons again.",
    success: { media: { 'text/html': { description: 'The page.' } } },
    errors: [],
    form: z.object({
      scope: z.optional(z.enum(['team', 'everyone'])),
      'List-Unsubscribe': z.optional(z.literal('One-Click')),
    }),
  },
  'page-security': {
    tag: 'Pages',
    summary: 'The account security page',
    description:
      "The signed-in user's factors (TOTP apps and passkeys), recovery codes and the step-up, over the same rules as the API (docs/mfa.md). Its session is an HttpOnly, SameSite=Strict cookie holding an access token (an hour); without one, the sign-in form (e-mail and password, or a passkey).",
    success: { media: { 'text/html': { description: 'The page.' } } },
    errors: [],
  },
  'page-security-action': {
    tag: 'Pages',
    summary: "The account security page's forms",
    description:
      "A form body: `action` (`sign-in`, `adopt`, `step-up`, `recovery-code`, `enrol-totp`, `activate-totp`, `regenerate-codes`, `remove-factor`, `sign-out`) and its fields. Only from the page's own origin (`Origin`: 403 otherwise). Answers the page again, saying what was done or why not.",
    success: { media: { 'text/html': { description: 'The page.' } } },
    errors: ['forbidden'],
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
} as const satisfies Partial<Record<RouteName, Operation>>;
