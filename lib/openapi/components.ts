/** The document's shared schemas (components), with their names, descriptions and examples, and how a schema is written inline or by reference. */
import * as z from 'zod/mini';
import { type ErrorCode, MESSAGES, STATUS } from '#lib/core/errors.ts';
import {
  AuditEntrySchema,
  AuthSessionSchema,
  ConcealedSignUpSchema,
  SignUpAnswerSchema,
  BulkInviteResultSchema,
  BulkInviteResultsSchema,
  EmptySchema,
  errorEnvelope,
  InviteSchema,
  JwksSchema,
  OpenIdConfigurationSchema,
  MemberSchema,
  MembershipSchema,
  SessionInfoSchema,
  StepUpSchema,
  TeamSchema,
  TransferSchema,
  UserSchema,
  IdentitySchema,
  IdentityListSchema,
  WebhookEndpointCreatedSchema,
  WebhookDeliverySchema,
  WebhookEndpointSchema,
  WebhookReplaySchema,
} from '#lib/wire/responses.ts';
import {
  GoTrueErrorSchema,
  GoTrueSessionSchema,
  GoTrueSettingsSchema,
  GoTrueSignUpAnswerSchema,
  GoTrueStepUpSchema,
  GoTrueTokenBody,
  GoTrueUserSchema,
} from '#lib/wire/gotrue.ts';
import {
  ChallengeSchema,
  EnrolmentSchema,
  FactorListSchema,
  FactorRemovedSchema,
  FactorSchema,
  RecoveryCodesSchema,
  TotpEnrolmentSchema,
  WebauthnChallengeSchema,
  WebauthnEnrolmentSchema,
} from '#lib/wire/mfa.ts';
import { BulkInviteRow, Email, InviteBody, RefreshBody, SignInBody } from '#lib/wire/schemas.ts';
import {
  DomainListSchema,
  DomainSchema,
  JoinRequestSchema,
  JoinResultSchema,
  JoinableTeamListSchema,
  JoinableTeamSchema,
} from '#lib/wire/domains.ts';
import { ProviderUrlSchema } from '#lib/wire/oauth.ts';

export type Json = Record<string, unknown>;

interface Meta {
  id?: string;
  title?: string;
  description?: string;
  examples?: unknown[];
  format?: string;
}

const EXAMPLE_TIME = '2026-11-21T09:30:00.000Z';

const EXAMPLE_USER = {
  id: '4b0c0f7e-5d1a-4f7e-9a53-2f1b8c6d7e90',
  aud: 'authenticated',
  role: 'authenticated',
  email: 'ada@example.com',
  last_sign_in_at: EXAMPLE_TIME,
  app_metadata: { provider: 'email', providers: ['email'] },
  user_metadata: { firstName: 'Ada', lastName: 'Lovelace' },
  created_at: EXAMPLE_TIME,
  updated_at: EXAMPLE_TIME,
};

const EXAMPLE_TEAM = { id: 1764751234567, name: 'Acme', slug: 'acme', logo: null, createdAt: EXAMPLE_TIME, updatedAt: EXAMPLE_TIME };

/** Names, descriptions and examples of the shared schemas: the document's components. */
const metadata = z.registry<Meta>();
metadata.add(TeamSchema, { id: 'Team', examples: [EXAMPLE_TEAM] });
metadata.add(MembershipSchema, {
  id: 'Membership',
  examples: [
    { id: 1764751234901, teamId: EXAMPLE_TEAM.id, userId: 1764751230001, role: 'ADMIN', createdAt: EXAMPLE_TIME, updatedAt: EXAMPLE_TIME },
  ],
});
metadata.add(MemberSchema, {
  id: 'Member',
  examples: [
    {
      id: 1764751234901,
      userId: 1764751230001,
      role: 'OWNER',
      email: 'ada@example.com',
      firstName: 'Ada',
      lastName: 'Lovelace',
      createdAt: EXAMPLE_TIME,
      updatedAt: EXAMPLE_TIME,
    },
  ],
});
metadata.add(UserSchema, { id: 'User', description: "Shaped like Supabase's user; `id` is the user's UUID.", examples: [EXAMPLE_USER] });
metadata.add(ConcealedSignUpSchema, {
  id: 'ConcealedSignUp',
  description:
    'Sign-up with `CONCEAL_ACCOUNTS=true`: no session (sign in once the address is confirmed), and the user as made; for an address an account holds, as it would have been made (a fresh `id`), so that the answer tells nothing.',
});
metadata.add(SignUpAnswerSchema, {
  id: 'SignUpAnswer',
  description: 'The session, as sign-in answers it; or, with `CONCEAL_ACCOUNTS=true`, `ConcealedSignUp`.',
});
metadata.add(AuthSessionSchema, {
  id: 'AuthSession',
  examples: [
    {
      session: {
        access_token: 'eyJhbGciOiJSUzI1NiIsImtpZCI6IjIwMjYtMTEtMjEiLCJ0eXAiOiJhdCtqd3QifQ.eyJzdWIiOiI0YjBjIn0.c2lnbmF0dXJl',
        token_type: 'bearer',
        expires_in: 3600,
        expires_at: 1795254600,
        refresh_token: 'Yp1xR0m8pXz2vS3bQ9cH4kL7tN6wE5aJ1fU0iO2gD8s',
        user: EXAMPLE_USER,
      },
    },
  ],
});
metadata.add(SessionInfoSchema, { id: 'SessionInfo' });
metadata.add(IdentitySchema, {
  id: 'Identity',
  description: "A way to sign in, in GoTrue's shape: the password's (`provider: email`) or a linked provider's (docs/sso.md).",
});
metadata.add(IdentityListSchema, { id: 'IdentityList' });
metadata.add(DomainSchema, {
  id: 'Domain',
  description: 'A domain a team claims, the TXT record that proves it, and what it lets people at it do (docs/domains.md).',
});
metadata.add(DomainListSchema, { id: 'DomainList' });
metadata.add(JoinableTeamSchema, { id: 'JoinableTeam' });
metadata.add(JoinableTeamListSchema, { id: 'JoinableTeamList' });
metadata.add(JoinResultSchema, { id: 'JoinResult' });
metadata.add(JoinRequestSchema, { id: 'JoinRequest' });
metadata.add(ProviderUrlSchema, { id: 'ProviderUrl', description: "The provider's sign-in page, for the browser." });
metadata.add(FactorSchema, { id: 'Factor', description: "A second factor (GoTrue's shape, as auth-js reads it from the user)." });
metadata.add(FactorListSchema, { id: 'FactorList' });
metadata.add(TotpEnrolmentSchema, {
  id: 'TotpEnrolment',
  description:
    'A new TOTP factor and its key, shown this once: `secret` (base32), `uri` (`otpauth://`), `qr_code` (an SVG document of the URI).',
});
metadata.add(WebauthnEnrolmentSchema, {
  id: 'WebauthnEnrolment',
  description: 'A new passkey factor, unverified until its first challenge (`create`) is answered and verified.',
});
metadata.add(EnrolmentSchema, { id: 'Enrolment' });
metadata.add(WebauthnChallengeSchema, {
  id: 'WebauthnChallenge',
  description:
    "A passkey's challenge: `webauthn.credential_options.publicKey` are the options for navigator.credentials.create (`type: create`) or .get (`type: request`), binary fields as base64url.",
});
metadata.add(ChallengeSchema, { id: 'Challenge' });
metadata.add(FactorRemovedSchema, { id: 'FactorRemoved' });
metadata.add(RecoveryCodesSchema, { id: 'RecoveryCodes', description: 'Ten one-time codes, shown this once.' });
metadata.add(StepUpSchema, {
  id: 'StepUp',
  description: "The session raised to aal2; `recovery_codes` only when this verify set up the account's first factor.",
});

const EXAMPLE_INVITE = {
  id: 1764751239999,
  uuid: '9d5f3c1a-7b2e-4c8d-a6f0-1e2d3c4b5a69',
  teamId: EXAMPLE_TEAM.id,
  team: { id: EXAMPLE_TEAM.id, name: 'Acme', slug: 'acme' },
  email: 'grace@example.com',
  role: 'MEMBER',
  status: 'PENDING',
  invitedBy: { id: 1764751230001, email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' },
  expiresAt: '2026-11-28T09:30:00.000Z',
  createdAt: EXAMPLE_TIME,
  updatedAt: EXAMPLE_TIME,
};
metadata.add(InviteSchema, { id: 'Invite', examples: [EXAMPLE_INVITE] });
metadata.add(BulkInviteResultSchema, {
  id: 'BulkInviteResult',
  description:
    'What `POST /api/teams/{slug}/invites` answers for this row: `status` 201 and the invite, or its error status with `code`, `message` and `fields`.',
});
metadata.add(BulkInviteResultsSchema, {
  id: 'BulkInviteResults',
  description: 'One result per row asked, in their order.',
  examples: [
    [
      { email: 'grace@example.com', status: 201, invite: EXAMPLE_INVITE },
      { email: 'ada@example.com', status: 409, code: 'already_member', message: MESSAGES.already_member },
      {
        email: 'grace@example.com',
        status: 422,
        code: 'validation_failed',
        message: 'This address is already in invites[0]: each address is invited once per request.',
        fields: { email: 'repeats invites[0]' },
      },
    ],
  ],
});
metadata.add(TransferSchema, {
  id: 'Transfer',
  examples: [
    {
      id: '0f8e2b7c-3d4a-4e5f-9a6b-7c8d9e0f1a2b',
      team: { id: EXAMPLE_TEAM.id, name: 'Acme', slug: 'acme' },
      nominee: { memberId: 1764751234901, userId: 1764751230002, email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper' },
      nominatedBy: { userId: 1764751230001, email: 'ada@example.com' },
      createdAt: EXAMPLE_TIME,
      expiresAt: '2026-11-28T09:30:00.000Z',
    },
  ],
});
metadata.add(AuditEntrySchema, {
  id: 'AuditEntry',
  examples: [
    {
      id: '019ac1f2-6b3d-7e4f-8a9b-0c1d2e3f4a5b',
      createdAt: EXAMPLE_TIME,
      action: 'member.role_changed',
      actor: { userId: 1764751230001, email: 'ada@example.com' },
      target: { type: 'member', id: 1764751234901, userId: 1764751230002 },
      changes: { role: { before: 'MEMBER', after: 'ADMIN' } },
      requestId: 'c6a1f0d2-4b3e-4f5a-9b8c-7d6e5f4a3b2c',
      sourceIp: '203.0.113.7',
    },
  ],
});

const EXAMPLE_WEBHOOK = {
  id: 1764751236001,
  url: 'https://hooks.example.com/roster',
  events: ['member.role_changed', 'member.removed'],
  createdBy: { userId: 1764751230001 },
  createdAt: EXAMPLE_TIME,
};
metadata.add(WebhookEndpointSchema, { id: 'WebhookEndpoint', examples: [EXAMPLE_WEBHOOK] });
metadata.add(WebhookEndpointCreatedSchema, {
  id: 'WebhookEndpointCreated',
  description: 'The endpoint and its signing secret, shown in this answer only.',
  examples: [{ ...EXAMPLE_WEBHOOK, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw6tQqyGTOXqE=' }],
});
metadata.add(WebhookDeliverySchema, {
  id: 'WebhookDelivery',
  description: 'One attempt to deliver one event to the endpoint.',
  examples: [
    {
      id: '019ac1f2-7c4e-7a1b-9c2d-3e4f5a6b7c8d',
      eventId: '019ac1f2-6b3d-7e4f-8a9b-0c1d2e3f4a5b',
      event: 'member.role_changed',
      attempt: 2,
      replay: false,
      succeeded: false,
      responseStatus: 503,
      error: 'answered 503',
      durationMs: 184,
      createdAt: EXAMPLE_TIME,
      nextAttemptAt: '2026-11-21T09:35:00.000Z',
    },
  ],
});
metadata.add(WebhookReplaySchema, {
  id: 'WebhookReplay',
  description: 'The event queued again: `eventId` is the `webhook-id` the endpoint will receive.',
  examples: [{ eventId: '019ac1f2-6b3d-7e4f-8a9b-0c1d2e3f4a5b' }],
});
metadata.add(EmptySchema, { id: 'Empty', description: 'Nothing to say beyond the status.' });
metadata.add(JwksSchema, { id: 'Jwks' });
metadata.add(GoTrueUserSchema, {
  id: 'GoTrueUser',
  description: 'The user as GoTrue answers it: the same account, without the dates that have no value yet.',
});
metadata.add(GoTrueSessionSchema, {
  id: 'GoTrueSession',
  description: "GoTrue's session: the access and refresh tokens and the user, bare.",
});
metadata.add(GoTrueStepUpSchema, {
  id: 'GoTrueStepUp',
  description: "GoTrue's session raised to aal2, bare; `recovery_codes` only when this verify set up the account's first factor.",
});
metadata.add(GoTrueSignUpAnswerSchema, {
  id: 'GoTrueSignUpAnswer',
  description: 'The session; with `CONCEAL_ACCOUNTS=true`, the user alone, for a new address and for one an account holds alike.',
});
metadata.add(GoTrueSettingsSchema, {
  id: 'GoTrueSettings',
  description: 'What this deployment offers: e-mail and password, confirmations on.',
});
metadata.add(GoTrueErrorSchema, {
  id: 'GoTrueError',
  description: "GoTrue's error: `code` and `error_code` name it, `msg` says it; a weak new password adds why.",
  examples: [{ code: 'invalid_credentials', error_code: 'invalid_credentials', msg: 'Invalid login credentials' }],
});
metadata.add(OpenIdConfigurationSchema, {
  id: 'OpenIdConfiguration',
  examples: [
    {
      issuer: 'https://abc123.execute-api.us-east-1.amazonaws.com',
      jwks_uri: 'https://abc123.execute-api.us-east-1.amazonaws.com/.well-known/jwks.json',
      token_endpoint: 'https://abc123.execute-api.us-east-1.amazonaws.com/auth/v1/token',
      grant_types_supported: ['password', 'refresh_token'],
      response_types_supported: ['token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256', 'EdDSA'],
      token_endpoint_auth_methods_supported: ['none'],
      claims_supported: ['iss', 'sub', 'aud', 'exp', 'iat', 'role', 'aal', 'amr', 'session_id', 'email', 'is_anonymous'],
    },
  ],
});

/** One component per error code: the envelope with that `code`, so each response lists exactly its codes. */
const errorId = (code: ErrorCode): string => `${code.replace(/(^|_)([a-z])/g, (_m, _u, c: string) => c.toUpperCase())}Error`;

export const ERROR_COMPONENTS = new Map<ErrorCode, z.ZodMiniType>();
for (const code of Object.keys(STATUS) as ErrorCode[]) {
  const schema = errorEnvelope([code]);
  ERROR_COMPONENTS.set(code, schema);
  metadata.add(schema, {
    id: errorId(code),
    description: `${STATUS[code]}: ${MESSAGES[code]}`,
    examples: [{ error: { code, message: MESSAGES[code] } }],
  });
}
metadata.add(Email, { format: 'email', description: 'Trimmed and lowercased before use.' });

const REF = (id: string) => `#/components/schemas/${id}`;

/** zod's `format` says what its long `pattern` does; keep the document readable. */
const tidy = ({ jsonSchema }: { jsonSchema: Json }) => {
  if (jsonSchema.format !== undefined) delete jsonSchema.pattern;
};

/** The registered schemas, but for the error codes no route answers (405 comes from no route's function). */
export const components = (usedCodes: ReadonlySet<ErrorCode>): Record<string, Json> => {
  const { schemas } = z.toJSONSchema(metadata, { target: 'draft-2020-12', uri: REF, override: tidy });
  const unused = new Set((Object.keys(STATUS) as ErrorCode[]).filter((code) => !usedCodes.has(code)).map(errorId));
  return Object.fromEntries(
    Object.entries(schemas)
      .filter(([id, schema]) => schema.$id !== undefined && !unused.has(id))
      .map(([id, { $schema: _s, $id: _i, ...schema }]) => [id, schema]),
  );
};

/**
 * Schemas that validate less than they document: a bulk invite's row is checked row by row after
 * the list, but it is an InviteBody all the same, and clients should see its type.
 */
const DOCUMENTED_AS = new Map<z.ZodMiniType, z.ZodMiniType>([
  [BulkInviteRow, InviteBody],
  // GoTrue's token endpoint takes either grant's members; its use case checks those of the grant asked for.
  [GoTrueTokenBody, z.union([SignInBody, RefreshBody])],
]);

/** A request schema inline, with references to the components it uses. */
export const inline = (schema: z.ZodMiniType, io: 'input' | 'output'): Json => {
  const documentedAs = DOCUMENTED_AS.get(schema);
  if (documentedAs) return inline(documentedAs, io);
  const override = (ctx: { zodSchema: unknown; jsonSchema: Json }) => {
    // A nested one (a bulk row): the validator's says nothing (`{}`), so the documented one goes in its place.
    const documented = DOCUMENTED_AS.get(ctx.zodSchema as z.ZodMiniType);
    if (documented) Object.assign(ctx.jsonSchema, inline(documented, io));
    tidy(ctx);
  };
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io, metadata, unrepresentable: 'any', override }) as Json;
  delete json.$schema;
  return json;
};

export const component = (schema: z.ZodMiniType): Json => {
  const id = metadata.get(schema)?.id;
  if (!id) throw new Error('response schemas are registered components');
  return { $ref: REF(id) };
};

export const dataOf = (schema: Json): Json => ({
  type: 'object',
  properties: { data: schema },
  required: ['data'],
  additionalProperties: false,
});
