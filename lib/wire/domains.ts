import * as z from 'zod/mini';
import { DOMAIN_JOIN } from '#lib/db/entities/domains.ts';

/**
 * Team domains (docs/domains.md): what the routes read and answer. Views are typed from these
 * schemas, and the OpenAPI document is generated from them.
 */

const DOMAIN_ERROR = 'must be a domain name such as example.com (the ASCII form, xn-- for an international one)';
const LABEL = '(?!-)[a-z0-9-]{1,63}(?<!-)';
const DOMAIN = new RegExp(`^${LABEL}(\\.${LABEL})+$`);

/** A domain name, compared in lower case; at least two labels (no top-level domain alone). */
export const DomainName = z.string({ error: 'must be a string' }).check(
  z.trim(),
  z.toLowerCase(),
  // 253, less the record name's `_roster-challenge.` (18): a longer one could never be looked up.
  z.maxLength(235, { error: 'must be at most 235 characters' }),
  z.regex(DOMAIN, { error: DOMAIN_ERROR }),
);

const Join = z.enum(DOMAIN_JOIN, { error: 'must be off, member or request' });

/** POST /api/teams/{slug}/domains. `join` defaults to `request`: nobody joins unseen until an owner says so. */
export const DomainBody = z.object({ domain: DomainName, join: z.optional(Join) });
export const DomainUpdateBody = z.object({ join: Join });

const Id = z.int().check(z.positive());
const Timestamp = z.iso.datetime();

export const DomainSchema = z.strictObject({
  id: Id,
  domain: z.string(),
  status: z.enum(['PENDING', 'VERIFIED', 'LAPSED']),
  join: Join,
  /** The DNS record that proves the team's control of the domain: publish it, then verify. */
  verification: z.strictObject({ type: z.literal('TXT'), name: z.string(), value: z.string() }),
  verifiedAt: z.nullable(Timestamp),
  checkedAt: z.nullable(Timestamp),
  /** Why the last check failed (no record, another value, DNS failure); null after a success. */
  problem: z.nullable(z.string()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export const DomainListSchema = z.array(DomainSchema);

/** A team the signed-in user may join through the verified domain of their confirmed address. */
export const JoinableTeamSchema = z.strictObject({
  team: z.strictObject({ id: Id, name: z.string(), slug: z.string() }),
  domain: z.string(),
  join: z.enum(['member', 'request']),
  /** A request of this user waits for an owner or admin. */
  requested: z.boolean(),
});
export const JoinableTeamListSchema = z.array(JoinableTeamSchema);

export const JoinResultSchema = z.strictObject({ status: z.enum(['MEMBER', 'REQUESTED']) });

export const JoinRequestSchema = z.strictObject({ userId: Id, email: z.string(), domain: z.string(), createdAt: Timestamp });

export type DomainInput = z.infer<typeof DomainBody>;
export type DomainUpdateInput = z.infer<typeof DomainUpdateBody>;
export type DomainView = z.infer<typeof DomainSchema>;
export type JoinableTeam = z.infer<typeof JoinableTeamSchema>;
export type JoinRequestView = z.infer<typeof JoinRequestSchema>;
