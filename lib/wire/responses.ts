import * as z from 'zod/mini';
import type { ErrorCode } from '#lib/core/errors.ts';
import { AUDIT_ACTIONS, AUDIT_TARGETS } from '#lib/db/entities/audit-actions.ts';
import { ROLES } from '#lib/db/entities/roles.ts';
import { FactorSchema } from './mfa.ts';

/**
 * What the API answers, as zod schemas: the views in views.ts are typed from them, the OpenAPI
 * document is generated from them, and the HTTP suite checks every response against that
 * document. Objects are strict, so a field that is not listed here cannot leak unnoticed.
 * Functions import only the types: none of this is in a bundle.
 */
const Id = z.int().check(z.positive());
const Timestamp = z.iso.datetime();
const Uuid = z.uuid();
const Role = z.enum(ROLES);

export const TeamSchema = z.strictObject({
  id: Id,
  name: z.string(),
  slug: z.string(),
  logo: z.nullable(z.string()),
  /** Every team route answers an aal1 session 403 `mfa_required` (docs/mfa.md). */
  requireMfa: z.boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

/** The membership record that a role update returns. */
export const MembershipSchema = z.strictObject({
  id: Id,
  teamId: Id,
  userId: Id,
  role: Role,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

/** A member as listed: the membership with its user's name and e-mail. */
export const MemberSchema = z.strictObject({
  id: Id,
  userId: Id,
  role: Role,
  email: z.email(),
  firstName: z.string(),
  lastName: z.string(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

/**
 * A way to sign in, as GoTrue lists it (docs/sso.md): `id` is the provider's subject (the user's
 * UUID for `email`, the password), `identity_id` Roster's id for the link.
 */
export const IdentitySchema = z.strictObject({
  identity_id: Uuid,
  id: z.string(),
  user_id: Uuid,
  provider: z.string(),
  email: z.email(),
  identity_data: z.strictObject({ sub: z.string(), email: z.email(), email_verified: z.boolean() }),
  created_at: Timestamp,
  last_sign_in_at: z.nullable(Timestamp),
  updated_at: Timestamp,
});

export const IdentityListSchema = z.array(IdentitySchema);

/** Shaped like Supabase's user, as the seed asks; `id` is the user's UUID. */
export const UserSchema = z.strictObject({
  id: Uuid,
  aud: z.literal('authenticated'),
  role: z.literal('authenticated'),
  email: z.email(),
  /** When the address was confirmed; null until then. `confirmed_at` says the same (GoTrue has both). */
  email_confirmed_at: z.nullable(Timestamp),
  confirmed_at: z.nullable(Timestamp),
  /** Only while an e-mail change waits for its confirmation link: the address it changes to. */
  new_email: z.optional(z.email()),
  last_sign_in_at: z.nullable(Timestamp),
  /** `provider`: how the account was made (`email`: a sign-up); `providers`: every way it signs in now (`email` while it has a password). */
  app_metadata: z.strictObject({ provider: z.string(), providers: z.array(z.string()) }),
  /** The names, and what the user's app stored beside them through the Supabase-compatible API (`data`). */
  user_metadata: z.looseObject({ firstName: z.string(), lastName: z.string() }),
  /** Only once a factor was set up, as GoTrue: auth-js's listFactors and getAuthenticatorAssuranceLevel read it (docs/mfa.md). */
  factors: z.optional(z.array(FactorSchema)),
  /** Only once a provider was linked (docs/sso.md): the ways in, the password's (`email`) among them while there is one. */
  identities: z.optional(z.array(IdentitySchema)),
  created_at: Timestamp,
  updated_at: Timestamp,
});

const SessionSchema = z.strictObject({
  access_token: z.string(),
  token_type: z.literal('bearer'),
  /** Seconds the access token lives. */
  expires_in: z.int().check(z.positive()),
  /** When the access token expires, in seconds since the epoch. */
  expires_at: z.int().check(z.positive()),
  refresh_token: z.string(),
  user: UserSchema,
});

export const AuthSessionSchema = z.strictObject({ session: SessionSchema });

/** A session raised to aal2 (a verified code, a recovery code); with the recovery codes when this verify set up the first factor. */
export const StepUpSchema = z.strictObject({ session: SessionSchema, recovery_codes: z.optional(z.array(z.string())) });

/**
 * Sign-up's answer with CONCEAL_ACCOUNTS (docs/accounts.md, "Concealing accounts"): no session
 * (sign in once the address is confirmed), and the user as made, or as it would have been made for
 * an address an account holds: the same shape either way.
 */
export const ConcealedSignUpSchema = z.strictObject({ session: z.null(), user: UserSchema });

export const SignUpAnswerSchema = z.union([AuthSessionSchema, ConcealedSignUpSchema]);

/** One of the caller's sessions as `GET /api/auth/sessions` lists it. */
export const SessionInfoSchema = z.strictObject({
  id: Uuid,
  createdAt: Timestamp,
  lastUsedAt: Timestamp,
  userAgent: z.nullable(z.string()),
  ip: z.nullable(z.string()),
  current: z.boolean(),
});

export const InviteSchema = z.strictObject({
  id: Id,
  uuid: Uuid,
  teamId: Id,
  team: z.strictObject({ id: Id, name: z.string(), slug: z.string() }),
  email: z.email(),
  role: Role,
  status: z.enum(['PENDING', 'ACCEPTED', 'DECLINED', 'REVOKED']),
  /** null once the inviter's account no longer exists. */
  invitedBy: z.nullable(z.strictObject({ id: Id, email: z.email(), firstName: z.string(), lastName: z.string() })),
  expiresAt: Timestamp,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

/**
 * A team's open ownership transfer: who is nominated (as the member list shows them), by whom, and
 * until when it can be accepted. `id` is a UUID: each nomination is a new transfer.
 */
export const TransferSchema = z.strictObject({
  id: Uuid,
  team: z.strictObject({ id: Id, name: z.string(), slug: z.string() }),
  nominee: z.strictObject({ memberId: Id, userId: Id, email: z.email(), firstName: z.string(), lastName: z.string() }),
  nominatedBy: z.strictObject({ userId: Id, email: z.email() }),
  createdAt: Timestamp,
  expiresAt: Timestamp,
});

/**
 * One entry of a team's audit log (docs/audit.md): who (`actor`), did what (`action`) to what
 * (`target`), which fields changed from what to what, and the request it came with.
 */
export const AuditEntrySchema = z.strictObject({
  id: z.string().check(z.minLength(36), z.maxLength(36)),
  createdAt: Timestamp,
  action: z.enum(AUDIT_ACTIONS),
  /** `userId` null: the owner of the address, through a link Roster mailed, without an account (`mail.blocked`). */
  actor: z.strictObject({ userId: z.nullable(Id), email: z.email() }),
  target: z.strictObject({
    type: z.enum(AUDIT_TARGETS),
    id: Id,
    email: z.optional(z.email()),
    userId: z.optional(Id),
  }),
  changes: z.record(z.string(), z.strictObject({ before: z.optional(z.unknown()), after: z.optional(z.unknown()) })),
  requestId: z.nullable(z.string()),
  sourceIp: z.nullable(z.string()),
});

/**
 * One row of a bulk invite's answer: what `POST /api/teams/{slug}/invites` answers for that row
 * (its status; on success the invite as the team's list shows it, else the error's code, message
 * and fields). `email` is the address as normalised, or as sent when it is not one (null: not a string).
 */
export const BulkInviteResultSchema = z.union([
  z.strictObject({ email: z.email(), status: z.literal(201), invite: InviteSchema }),
  z.strictObject({
    email: z.nullable(z.string()),
    status: z.literal([400, 403, 409, 422, 429, 500, 503]),
    code: z.enum([
      'invalid_body',
      'validation_failed',
      'forbidden',
      'already_member',
      'conflict',
      'rate_limited',
      'internal',
      'unavailable',
    ]),
    message: z.string(),
    fields: z.optional(z.record(z.string(), z.string())),
  }),
]);

/** A bulk invite's answer: one row per row asked, in their order. */
export const BulkInviteResultsSchema = z.array(BulkInviteResultSchema);

/**
 * A team's webhook endpoint (docs/webhooks.md): where the events it subscribes to (audit actions)
 * are POSTed. The signing secret is not here: only the answer to the registration shows it.
 */
export const WebhookEndpointSchema = z.strictObject({
  id: Id,
  url: z.url(),
  events: z.array(z.enum(AUDIT_ACTIONS)),
  createdBy: z.strictObject({ userId: Id }),
  createdAt: Timestamp,
});

/** The registration's answer: the endpoint and, this once, its Standard Webhooks signing secret. */
export const WebhookEndpointCreatedSchema = z.strictObject({
  ...WebhookEndpointSchema.shape,
  secret: z.string().check(z.regex(/^whsec_[A-Za-z0-9+/]{32,88}={0,2}$/)),
});

/**
 * One attempt in a webhook endpoint's delivery log (docs/webhooks.md): which event (`eventId`, the
 * audit entry's id and the message's `webhook-id`), the attempt's number (from 1; a replay counts
 * from 1 again), what the receiver answered or what went wrong, and when the next attempt is due.
 */
export const WebhookDeliverySchema = z.strictObject({
  id: z.string().check(z.minLength(36), z.maxLength(36)),
  eventId: z.string().check(z.minLength(36), z.maxLength(36)),
  event: z.enum(AUDIT_ACTIONS),
  attempt: Id,
  replay: z.boolean(),
  succeeded: z.boolean(),
  responseStatus: z.nullable(z.int()),
  error: z.nullable(z.string()),
  durationMs: z.int().check(z.nonnegative()),
  createdAt: Timestamp,
  nextAttemptAt: z.nullable(Timestamp),
});

/** The answer to a replay: the event queued again for the endpoint. */
export const WebhookReplaySchema = z.strictObject({ eventId: z.string().check(z.minLength(36), z.maxLength(36)) });

/** The `data` of a request that only acknowledges (delete, accept, decline, sign-out…). */
export const EmptySchema = z.strictObject({});

/** RFC 7517 JWK Set of the public keys that verify access tokens (RSA by default; Ed25519 and P-256 optional), served bare. */
export const JwksSchema = z.strictObject({
  keys: z.array(
    z.union([
      z.strictObject({
        kty: z.literal('RSA'),
        kid: z.string(),
        alg: z.literal('RS256'),
        use: z.literal('sig'),
        n: z.string(),
        e: z.string(),
      }),
      z.strictObject({
        kty: z.enum(['OKP', 'EC']),
        kid: z.string(),
        alg: z.enum(['EdDSA', 'ES256']),
        use: z.literal('sig'),
        crv: z.enum(['Ed25519', 'P-256']),
        x: z.string(),
        y: z.optional(z.string()),
      }),
    ]),
  ),
});

/**
 * The OpenID Connect discovery document (OpenID Connect Discovery 1.0 §3) as far as a JWT verifier
 * needs it: where the keys are, and what the tokens are. Served bare at {issuer}/.well-known/openid-configuration.
 */
export const OpenIdConfigurationSchema = z.strictObject({
  issuer: z.string(),
  jwks_uri: z.string(),
  token_endpoint: z.string(),
  grant_types_supported: z.array(z.string()),
  response_types_supported: z.array(z.string()),
  subject_types_supported: z.array(z.literal('public')),
  id_token_signing_alg_values_supported: z.array(z.enum(['RS256', 'EdDSA', 'ES256'])),
  token_endpoint_auth_methods_supported: z.array(z.string()),
  claims_supported: z.array(z.string()),
});

/** CONTRACT.md's error envelope with `code` one of `codes`; `fields` names each bad field on 400 and 422. */
export const errorEnvelope = (codes: readonly ErrorCode[]) =>
  z.strictObject({
    error: z.strictObject({
      code: z.enum(codes),
      message: z.string(),
      fields: z.optional(z.record(z.string(), z.string())),
    }),
  });

export type Team = z.infer<typeof TeamSchema>;
export type Membership = z.infer<typeof MembershipSchema>;
export type Member = z.infer<typeof MemberSchema>;
export type User = z.infer<typeof UserSchema>;
export type Identity = z.infer<typeof IdentitySchema>;
export type AuthSession = z.infer<typeof AuthSessionSchema>;
export type StepUp = z.infer<typeof StepUpSchema>;
export type SessionInfo = z.infer<typeof SessionInfoSchema>;
export type AuditEntry = z.infer<typeof AuditEntrySchema>;
export type Invite = z.infer<typeof InviteSchema>;
export type BulkInviteResult = z.infer<typeof BulkInviteResultSchema>;
export type Transfer = z.infer<typeof TransferSchema>;
export type WebhookEndpoint = z.infer<typeof WebhookEndpointSchema>;
export type WebhookEndpointCreated = z.infer<typeof WebhookEndpointCreatedSchema>;
export type WebhookDelivery = z.infer<typeof WebhookDeliverySchema>;
export type OpenIdConfiguration = z.infer<typeof OpenIdConfigurationSchema>;
export type WebhookReplay = z.infer<typeof WebhookReplaySchema>;
