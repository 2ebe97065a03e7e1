import type { RouteName } from '#lib/http/routes.ts';
import { DomainListSchema, DomainSchema, JoinRequestSchema, JoinResultSchema, JoinableTeamListSchema } from '#lib/wire/domains.ts';
import { EmptySchema } from '#lib/wire/responses.ts';
import { type Operation, WRITES } from './operation.ts';

/** A team's domains and joining through them (docs/domains.md). */
export const DOMAIN_OPERATIONS = {
  'teams-domains-list': {
    tag: 'Domains',
    summary: "A team's domains",
    description: 'OWNER or ADMIN (403 for a MEMBER): every domain the team claims, with its TXT record and its status.',
    success: { data: DomainListSchema },
    errors: ['not_found', 'forbidden'],
  },
  'teams-domains-create': {
    tag: 'Domains',
    summary: 'Claim a domain',
    description:
      'OWNER only. Claims a domain for the team: PENDING, with the TXT record to publish (`verification`). Any team may claim any domain; only one can verify it. `join` (default `request`): what people whose confirmed address is at the domain may do once it is verified: `member` join as MEMBER, `request` ask to join, `off` nothing. At most 10 domains a team.',
    success: { data: DomainSchema },
    errors: ['not_found', 'forbidden', ...WRITES],
    example: { domain: 'acme.com', join: 'member' },
  },
  'teams-domains-update': {
    tag: 'Domains',
    summary: "Change a domain's join setting",
    description: 'OWNER only.',
    success: { data: DomainSchema },
    errors: ['not_found', 'forbidden', ...WRITES],
    example: { join: 'request' },
  },
  'teams-domains-delete': {
    tag: 'Domains',
    summary: 'Remove a domain',
    description: 'OWNER only. The claim goes, and the verification with it (the domain is free for another team). Nobody is removed.',
    success: { data: EmptySchema },
    errors: ['not_found', 'forbidden', ...WRITES],
  },
  'teams-domains-verify': {
    tag: 'Domains',
    summary: 'Verify a domain',
    description:
      'OWNER only. Looks up the TXT record now: found, the domain is VERIFIED for this team (409 `domain_taken` when another team verified it first); not found, 422 `domain_not_verified` says what is missing (and `problem` keeps it). A verified domain is checked again every day; one whose record is gone lapses.',
    success: { data: DomainSchema },
    errors: ['not_found', 'forbidden', 'domain_taken', 'domain_not_verified', ...WRITES],
  },
  'teams-joinable': {
    tag: 'Domains',
    summary: 'Teams you may join through your address',
    description:
      'The team (at most one) that verified the domain of your confirmed address and lets people at it join or ask to; none while the address is unconfirmed or you are a member already.',
    success: { data: JoinableTeamListSchema },
    errors: [],
  },
  'teams-join': {
    tag: 'Domains',
    summary: 'Join a team through your address',
    description:
      "Joins as MEMBER (`status: MEMBER`) or asks to (`status: REQUESTED`), as the team's verified domain of your confirmed address says. A team you may not join this way is 404, as one that does not exist; an unconfirmed address is 403 `email_not_verified`; a team that requires MFA needs an aal2 session.",
    success: { data: JoinResultSchema },
    errors: ['not_found', 'email_not_verified', 'already_member', 'mfa_required', ...WRITES],
  },
  'teams-join-requests': {
    tag: 'Domains',
    summary: 'Requests to join',
    description: 'OWNER or ADMIN: the people at a verified domain who asked to join.',
    success: { page: JoinRequestSchema },
    errors: ['not_found', 'forbidden'],
  },
  'teams-join-accept': {
    tag: 'Domains',
    summary: 'Accept a request to join',
    description:
      'OWNER or ADMIN: the requester (by user id) becomes a MEMBER, while the address is still theirs and confirmed. An unknown request is 404.',
    success: { data: EmptySchema },
    errors: ['not_found', 'forbidden', 'already_member', ...WRITES],
  },
  'teams-join-decline': {
    tag: 'Domains',
    summary: 'Decline a request to join',
    description: 'OWNER or ADMIN: the request goes. They may ask again.',
    success: { data: EmptySchema },
    errors: ['not_found', 'forbidden', ...WRITES],
  },
} as const satisfies Partial<Record<RouteName, Operation>>;
