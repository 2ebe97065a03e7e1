import type { RouteName } from '#lib/http/routes.ts';
import {
  AuditEntrySchema,
  EmptySchema,
  MemberSchema,
  MembershipSchema,
  TeamSchema,
  TransferSchema,
  WebhookDeliverySchema,
  WebhookEndpointCreatedSchema,
  WebhookEndpointSchema,
  WebhookReplaySchema,
} from '#lib/wire/responses.ts';
import { type Operation, WRITES } from './operation.ts';

/** The words of the team routes: teams, audit log, webhooks, members and ownership transfer. */
export const TEAM_OPERATIONS = {
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
    errors: ['slug_taken', ...WRITES],
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
    errors: ['not_found', 'forbidden', 'slug_taken', ...WRITES],
    example: { name: 'Acme Inc', slug: 'acme-inc' },
  },
  'teams-delete': {
    tag: 'Teams',
    summary: 'Delete a team',
    description: 'OWNER only. The slug is free at once; members and invites go with the team.',
    success: { data: EmptySchema },
    errors: ['not_found', 'forbidden', ...WRITES],
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
    errors: ['not_found', 'forbidden', ...WRITES],
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
    errors: ['not_found', 'forbidden', ...WRITES],
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
    errors: ['not_found', 'forbidden', 'rate_limited', ...WRITES],
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
    errors: ['not_found', 'forbidden', 'last_owner', ...WRITES],
    example: { role: 'ADMIN' },
  },
  'members-remove': {
    tag: 'Members',
    summary: 'Remove a member',
    description: 'OWNER: anyone. ADMIN: MEMBERs. Anyone may leave. A team keeps at least one OWNER.',
    success: { data: EmptySchema },
    errors: ['not_found', 'forbidden', 'last_owner', ...WRITES],
  },
  'transfer-create': {
    tag: 'Ownership transfer',
    summary: 'Nominate a member as owner',
    description:
      "OWNER only. Proposes to hand the caller's ownership to another member (`memberId`, the id `GET /api/teams/{slug}/members` lists): on acceptance the nominee becomes OWNER and the caller ADMIN. A team has at most one open transfer: a new nomination replaces it. It can be accepted for 7 days. The nominee is told by e-mail, which counts against the team's hourly mail allowance and the nominee's address's like an invitation (one a minute, 3 an hour, 10 a day with invitations: 429); a nominee who said no to the team's mail is nominated but not mailed. Nominating yourself or an OWNER is 422 on `memberId`; 409 `conflict` when the nominee's role or yours changed meanwhile.",
    success: { data: TransferSchema },
    errors: ['not_found', 'forbidden', 'rate_limited', ...WRITES],
    example: { memberId: 1764751234901 },
  },
  'transfer-accept': {
    tag: 'Ownership transfer',
    summary: 'Accept the ownership transfer',
    description:
      'The nominee only (403 for any other member). In one transaction the nominee becomes OWNER and the nominating owner ADMIN, only if both still hold the roles they had when nominated: otherwise 409 `transfer_stale` (nominate again). No open transfer, or an expired one: 404.',
    success: { data: EmptySchema },
    errors: ['not_found', 'forbidden', 'transfer_stale', ...WRITES],
  },
  'transfer-decline': {
    tag: 'Ownership transfer',
    summary: 'Decline the ownership transfer',
    description: 'The nominee only (403 for any other member). Ends the transfer; nothing else changes. No open transfer: 404.',
    success: { data: EmptySchema },
    errors: ['not_found', 'forbidden', ...WRITES],
  },
  'transfer-cancel': {
    tag: 'Ownership transfer',
    summary: 'Withdraw the ownership transfer',
    description: 'The nominating owner only (403 for any other member). Ends the transfer; nothing else changes. No open transfer: 404.',
    success: { data: EmptySchema },
    errors: ['not_found', 'forbidden', ...WRITES],
  },
} as const satisfies Partial<Record<RouteName, Operation>>;
