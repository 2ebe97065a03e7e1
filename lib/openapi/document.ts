import * as z from 'zod/mini';
import { type ErrorCode, MESSAGES, STATUS } from '../errors.ts';
import { requestOf } from '../http/requests.ts';
import { ROUTES, type Route, type RouteName, isIdempotent } from '../http/routes.ts';
import { keepsAnswer } from '../idempotency.ts';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../pagination.ts';
import { Email, SLUG_PATTERN } from '../schemas.ts';
import {
  AuditEntrySchema,
  AuthSessionSchema,
  BulkInviteResultSchema,
  BulkInviteResultsSchema,
  EmptySchema,
  errorEnvelope,
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
import { type Operation, OPERATIONS, TAGS } from './operations.ts';

/**
 * The OpenAPI 3.1 document, generated from the route table (paths, methods, auth), the request
 * schemas endpoint() validates with (requests.ts), the response schemas the views are typed by
 * (responses.ts) and the words in operations.ts. `npm run openapi` writes it to openapi.json;
 * nothing here is written twice by hand.
 */
type Json = Record<string, unknown>;

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
metadata.add(AuthSessionSchema, {
  id: 'AuthSession',
  examples: [
    {
      session: {
        access_token: 'eyJhbGciOiJFZERTQSIsImtpZCI6IjIwMjYtMTEtMjEiLCJ0eXAiOiJhdCtqd3QifQ.eyJzdWIiOiI0YjBjIn0.c2lnbmF0dXJl',
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
/** One component per error code: the envelope with that `code`, so each response lists exactly its codes. */
const errorId = (code: ErrorCode): string => `${code.replace(/(^|_)([a-z])/g, (_m, _u, c: string) => c.toUpperCase())}Error`;
const ERROR_COMPONENTS = new Map<ErrorCode, z.ZodMiniType>();
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
const components = (usedCodes: ReadonlySet<ErrorCode>): Record<string, Json> => {
  const { schemas } = z.toJSONSchema(metadata, { target: 'draft-2020-12', uri: REF, override: tidy });
  const unused = new Set((Object.keys(STATUS) as ErrorCode[]).filter((code) => !usedCodes.has(code)).map(errorId));
  return Object.fromEntries(
    Object.entries(schemas)
      .filter(([id, schema]) => schema.$id !== undefined && !unused.has(id))
      .map(([id, { $schema: _s, $id: _i, ...schema }]) => [id, schema]),
  );
};

/** A request schema inline, with references to the components it uses. */
const inline = (schema: z.ZodMiniType, io: 'input' | 'output'): Json => {
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io, metadata, unrepresentable: 'any', override: tidy }) as Json;
  delete json.$schema;
  return json;
};

const component = (schema: z.ZodMiniType): Json => {
  const id = metadata.get(schema)?.id;
  if (!id) throw new Error('response schemas are registered components');
  return { $ref: REF(id) };
};

const dataOf = (schema: Json): Json => ({
  type: 'object',
  properties: { data: schema },
  required: ['data'],
  additionalProperties: false,
});

const header = (description: string, required: boolean, schema: Json = { type: 'string' }) => ({ description, required, schema });
/** Response headers, defined once under components.headers; `required` where every answer that lists one sends it. */
const HEADERS: Record<string, Json> = {
  'X-Request-Id': header('The id of this request in the logs.', true),
  'Cache-Control': header('`no-store` on every API answer; the JWK Set and the docs may be cached.', true),
  'WWW-Authenticate': header('`Token realm="roster"`', true),
  'Retry-After': header('Seconds to wait before trying again.', true, { type: 'integer', minimum: 1 }),
  Link: header('`<absolute URL of the next page>; rel="next"`, only when another item exists.', false),
  'Idempotent-Replayed': header(
    '`true` when this is the stored answer to an earlier request with the same `Idempotency-Key`, sent again.',
    false,
    { type: 'string', enum: ['true'] },
  ),
};
const headers = (...names: string[]): Record<string, Json> =>
  Object.fromEntries(['X-Request-Id', 'Cache-Control', ...names].map((name) => [name, { $ref: `#/components/headers/${name}` }]));

const PARAMETERS: Record<string, Json> = {
  slug: { type: 'string', pattern: SLUG_PATTERN.source, description: "The team's slug." },
  memberId: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: "The member's id (not the user id)." },
  id: {
    type: 'integer',
    minimum: 1,
    maximum: Number.MAX_SAFE_INTEGER,
    description: "The invite's or the webhook endpoint's id, as its list shows it.",
  },
  uuid: { type: 'string', format: 'uuid', description: "The invite's UUID, as in the e-mailed link." },
  sessionId: { type: 'string', format: 'uuid', description: "The session's id, from `GET /api/auth/sessions`." },
  deliveryId: { type: 'string', format: 'uuid', description: "The delivery's id, from the endpoint's delivery log." },
  asset: { type: 'string', description: 'The file name.' },
};

/** The request header of the authenticated POSTs (docs/idempotency.md). */
const IDEMPOTENCY_PARAMETER: Json = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Any 1 to 255 printable ASCII characters (a UUID, say), new for each request. Sent again with the same request by the same user within 24 hours, it gets the first answer again (with `Idempotent-Replayed: true`) and nothing is done twice; with another request, 422 `idempotency_key_reused`; while the first still runs, 409 `idempotency_in_progress` with `Retry-After`. A 401, 429 or 5xx is not kept: a retry runs again.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
};

const pathParameters = (route: Route): Json[] =>
  [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => {
    const schema = PARAMETERS[name as string];
    if (!schema) throw new Error(`no schema for path parameter ${name}`);
    return { name, in: 'path', required: true, schema, description: schema.description };
  });

/** The query string as parameters: names and rules from the route's zod schema. */
const queryParameters = (schema: z.ZodMiniType | undefined, page: boolean): Json[] => {
  if (!schema) return [];
  const json = inline(schema, 'input') as { properties: Record<string, Json>; required?: string[] };
  return Object.entries(json.properties).map(([name, property]) => {
    if (page && name === 'limit') {
      return {
        name,
        in: 'query',
        required: false,
        description: `Items per page, 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT}).`,
        schema: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
      };
    }
    const description = page && name === 'cursor' ? "Where the page starts: copy it from the previous page's `Link` header." : undefined;
    return {
      name,
      in: 'query',
      required: json.required?.includes(name) ?? false,
      schema: property,
      ...(description ? { description } : {}),
    };
  });
};

/** The errors a route can answer: its own and those of its kind (see docs/api.md "Order of checks"). */
const errorCodes = (route: Route, operation: Operation): ErrorCode[] => {
  const request = requestOf(route.name as RouteName);
  const codes = new Set<ErrorCode>(operation.errors);
  const enveloped = !('bare' in operation.success) && !('media' in operation.success);
  if (enveloped) codes.add('body_too_large');
  if (route.auth) codes.add('unauthorized');
  if (route.body) ['unsupported_media_type', 'invalid_json', 'invalid_body', 'validation_failed'].forEach((c) => codes.add(c as ErrorCode));
  if (isIdempotent(route))
    ['validation_failed', 'idempotency_key_reused', 'idempotency_in_progress'].forEach((c) => codes.add(c as ErrorCode));
  if (request.query) codes.add('validation_failed');
  if (route.path.includes('{')) codes.add('not_found');
  codes.add('internal');
  if (route.actions.length > 0) codes.add('unavailable');
  return [...codes].sort((a, b) => STATUS[a] - STATUS[b] || a.localeCompare(b));
};

const ERROR_HEADERS: Partial<Record<number, string[]>> = { 401: ['WWW-Authenticate'], 429: ['Retry-After'], 503: ['Retry-After'] };

const errorRef = (code: ErrorCode): Json => component(ERROR_COMPONENTS.get(code) as z.ZodMiniType);

/** The answers an `Idempotency-Key` replays (lib/idempotency.ts keepsAnswer) carry `Idempotent-Replayed` then. */
const replayable = (route: Route, status: number): string[] => (isIdempotent(route) && keepsAnswer(status) ? ['Idempotent-Replayed'] : []);

const errorResponses = (route: Route, codes: ErrorCode[]): Record<string, Json> => {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(STATUS[code], [...(byStatus.get(STATUS[code]) ?? []), code]);
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [
      String(status),
      {
        description: list.map((code) => `\`${code}\``).join(', '),
        headers: {
          ...headers(...(ERROR_HEADERS[status] ?? []), ...replayable(route, status)),
          ...(list.includes('idempotency_in_progress') && !ERROR_HEADERS[status]?.includes('Retry-After')
            ? {
                'Retry-After': {
                  ...HEADERS['Retry-After'],
                  description: 'On `idempotency_in_progress`: seconds to wait.',
                  required: false,
                },
              }
            : {}),
        },
        content: {
          'application/json': {
            // The envelope with exactly the codes this route answers with this status.
            schema: list.length === 1 ? errorRef(list[0] as ErrorCode) : { anyOf: list.map(errorRef) },
          },
        },
      },
    ]),
  );
};

const successResponse = (route: Route, operation: Operation): Json => {
  const { success } = operation;
  const description = operation.summary;
  if ('media' in success) {
    return {
      description,
      headers: headers(),
      content: Object.fromEntries(Object.entries(success.media).map(([type, m]) => [type, { schema: { description: m.description } }])),
    };
  }
  if ('bare' in success) return { description, headers: headers(), content: { 'application/json': { schema: component(success.bare) } } };
  if ('page' in success) {
    return {
      description: `${description}, one page.`,
      headers: headers('Link'),
      content: { 'application/json': { schema: dataOf({ type: 'array', items: component(success.page) }) } },
    };
  }
  return {
    description,
    headers: headers(...replayable(route, route.status)),
    content: { 'application/json': { schema: dataOf(component(success.data)) } },
  };
};

/** What API Gateway answers itself, before any function runs, on every route: not in the envelope. */
const GATEWAY_RESPONSES: Record<string, Json> = {
  HeadersTooLarge: {
    description:
      'The request line and headers are over 10 KiB together (an oversized token, say): API Gateway refuses the request before Roster sees it, without the error envelope.',
  },
};
const GATEWAY_REFS = { '431': { $ref: '#/components/responses/HeadersTooLarge' } };

const operationOf = (route: Route): Json => {
  const operation: Operation = OPERATIONS[route.name as RouteName];
  const request = requestOf(route.name as RouteName);
  const page = 'page' in operation.success;
  const parameters = [
    ...pathParameters(route),
    ...queryParameters(request.query, page),
    ...(isIdempotent(route) ? [IDEMPOTENCY_PARAMETER] : []),
  ];
  return {
    operationId: route.name,
    tags: [operation.tag],
    summary: operation.summary,
    ...(operation.description ? { description: operation.description } : {}),
    security: route.auth ? [{ Token: [] }] : [],
    ...(parameters.length ? { parameters } : {}),
    ...(request.body
      ? {
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: inline(request.body, 'input'),
                ...(operation.example ? { example: operation.example } : {}),
              },
            },
          },
        }
      : {}),
    responses: {
      [String(route.status)]: successResponse(route, operation),
      ...errorResponses(route, errorCodes(route, operation)),
      ...GATEWAY_REFS,
    },
  };
};

const DESCRIPTION = `Teams, members with roles, and invitations behind one JSON API.

**Authentication.** Sign up or sign in, then send the access token as \`Authorization: Token <access_token>\`
(the scheme word is \`Token\`, not \`Bearer\`). Access tokens last an hour; trade the refresh token for a
new pair at \`POST /api/auth/refresh\` before then.

**Answers.** Success bodies are \`{ "data": … }\` (the JWK Set excepted); errors are
\`{ "error": { "code", "message", "fields"? } }\` with the statuses listed per operation. An unknown path is
404 and a known path with another method 405 with \`Allow\`.

**Lists** take \`limit\` (1–${MAX_LIMIT}, default ${DEFAULT_LIMIT}) and \`cursor\`; when more items follow, the
\`Link\` header holds the absolute URL of the next page (\`rel="next"\`).`;

export const buildDocument = (): Json => {
  const paths: Record<string, Record<string, Json>> = {};
  const usedCodes = new Set((ROUTES as readonly Route[]).flatMap((route) => errorCodes(route, OPERATIONS[route.name as RouteName])));
  for (const route of ROUTES as readonly Route[]) {
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: operationOf(route) };
  }
  return {
    openapi: '3.1.1',
    info: {
      title: 'Roster API',
      version: '0.1.0',
      description: DESCRIPTION,
    },
    servers: [{ url: '/', description: 'This deployment' }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    components: {
      schemas: components(usedCodes),
      responses: GATEWAY_RESPONSES,
      headers: HEADERS,
      securitySchemes: {
        Token: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: 'The access token from sign-up, sign-in or refresh, as `Token <access_token>`.',
        },
      },
    },
  };
};
