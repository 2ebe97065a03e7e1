/**
 * The OpenAPI 3.1 document, generated from the route table (paths, methods, auth), the request
 * schemas endpoint() validates with (lib/http/requests.ts), the response schemas the views are
 * typed by (lib/wire/responses.ts, named in ./components.ts) and each area's words
 * (./operations-*.ts). `npm run openapi` writes it to openapi.json; nothing here is written twice by hand.
 */
import type * as z from 'zod/mini';
import { type ErrorCode, STATUS } from '#lib/core/errors.ts';
import { DEFAULT_LIMIT, MAX_LIMIT } from '#lib/core/pagination.ts';
import { keepsAnswer } from '#lib/http/idempotency-store.ts';
import { requestOf } from '#lib/http/request-schemas.ts';
import { ROUTES, type Route, type RouteName, isIdempotent } from '#lib/http/routes.ts';
import { SLUG_PATTERN } from '#lib/wire/schemas.ts';
import { ERROR_COMPONENTS, type Json, component, components, dataOf, inline } from './components.ts';
import { type Operation, TAGS } from './operation.ts';
import { OPERATIONS } from './operations.ts';
import { gotrueCodeOf } from '#lib/http/gotrue-errors.ts';
import { GoTrueErrorSchema } from '#lib/wire/gotrue.ts';

const header = (description: string, required: boolean, schema: Json = { type: 'string' }) => ({ description, required, schema });

/** Response headers, defined once under components.headers; `required` where every answer that lists one sends it. */
const HEADERS: Record<string, Json> = {
  'X-Request-Id': header('The id of this request in the logs.', true),
  'Cache-Control': header('`no-store` on every API answer; the JWK Set and the docs may be cached.', true),
  'WWW-Authenticate': header('`Token realm="roster"`', true),
  'Retry-After': header('Seconds to wait before trying again.', true, { type: 'integer', minimum: 1 }),
  Link: header('`<absolute URL of the next page>; rel="next"`, only when another item exists.', false),
  Location: header('Where the browser goes next.', true, { type: 'string', format: 'uri' }),
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
    description: "The invite's or the webhook endpoint's id, as its list shows it; a request to join: the requester's user id.",
  },
  uuid: { type: 'string', format: 'uuid', description: "The invite's UUID, as in the e-mailed link." },
  sessionId: { type: 'string', format: 'uuid', description: "The session's id, from `GET /api/auth/sessions`." },
  deliveryId: { type: 'string', format: 'uuid', description: "The delivery's id, from the endpoint's delivery log." },
  factorId: { type: 'string', format: 'uuid', description: "The factor's id, from `GET /api/auth/factors` (or enrolment's answer)." },
  provider: {
    type: 'string',
    pattern: '^[a-z][a-z0-9-]{0,31}$',
    description: 'A provider this deployment offers (OAUTH_PROVIDERS), such as `google` or `github`.',
  },
  identityId: { type: 'string', format: 'uuid', description: "The identity's `identity_id`, from `GET /api/auth/identities`." },
  domain: { type: 'string', maxLength: 253, description: 'The domain, in lower case, as the team claimed it (`acme.com`).' },
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
  // Every route of endpoint()'s chain caps the body; the static documents do not read one.
  const chained = route.dialect === 'gotrue' || (!('bare' in operation.success) && !('media' in operation.success));
  if (chained) codes.add('body_too_large');
  if (route.auth) codes.add('unauthorized');
  if (route.body) ['unsupported_media_type', 'invalid_json', 'invalid_body', 'validation_failed'].forEach((c) => codes.add(c as ErrorCode));
  if (isIdempotent(route))
    ['validation_failed', 'idempotency_key_reused', 'idempotency_in_progress'].forEach((c) => codes.add(c as ErrorCode));
  if (request.query) codes.add('validation_failed');
  if (route.path.includes('{')) codes.add('not_found');
  // A team that requires MFA answers every route of its own an aal1 session 403 (docs/mfa.md).
  if (route.path.includes('{slug}')) codes.add('mfa_required');
  codes.add('internal');
  if (route.actions.length > 0) codes.add('unavailable');
  return [...codes].sort((a, b) => STATUS[a] - STATUS[b] || a.localeCompare(b));
};

const ERROR_HEADERS: Partial<Record<number, string[]>> = { 401: ['WWW-Authenticate'], 429: ['Retry-After'], 503: ['Retry-After'] };

const errorRef = (code: ErrorCode): Json => component(ERROR_COMPONENTS.get(code) as z.ZodMiniType);

/** The answers an `Idempotency-Key` replays (lib/http/idempotency-store.ts keepsAnswer) carry `Idempotent-Replayed` then. */
const replayable = (route: Route, status: number): string[] => (isIdempotent(route) && keepsAnswer(status) ? ['Idempotent-Replayed'] : []);

/**
 * A Supabase-compatible route's errors: GoTrue's shape and codes (lib/http/gotrue-errors.ts), one
 * response per status, each listing the GoTrue codes it carries. A refused new password is GoTrue's
 * 422 `weak_password`.
 */
const gotrueErrorResponses = (route: Route, codes: ErrorCode[]): Record<string, Json> => {
  const byStatus = new Map<number, Set<string>>();
  const add = (status: number, code: string) => byStatus.set(status, new Set([...(byStatus.get(status) ?? []), code]));
  for (const code of codes) add(...gotrueCodeOf(route.name, code));
  if (route.name === 'gotrue-signup' || route.name === 'gotrue-user-update') add(422, 'weak_password');
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [
      String(status),
      {
        description: [...list].map((code) => `\`${code}\``).join(', '),
        headers: headers(...(ERROR_HEADERS[status] ?? [])),
        content: { 'application/json': { schema: component(GoTrueErrorSchema) } },
      },
    ]),
  );
};

const errorResponses = (route: Route, codes: ErrorCode[]): Record<string, Json> => {
  if (route.dialect === 'gotrue') return gotrueErrorResponses(route, codes);
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
  if ('redirect' in success) return { description: success.redirect, headers: headers('Location') };
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

/** A form body as the pages' POST takes it (lib/http/form-body.ts): either encoding. */
const formBody = (form: Operation['form']): Json =>
  form
    ? {
        requestBody: {
          required: true,
          content: Object.fromEntries(
            ['application/x-www-form-urlencoded', 'multipart/form-data'].map((type) => [type, { schema: inline(form, 'input') }]),
          ),
        },
      }
    : {};

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
    // Either scheme: the seed's `Token <jwt>`, or the standard `Bearer <jwt>` (lib/auth/tokens.ts takes both).
    security: route.auth ? [{ Token: [] }, { Bearer: [] }] : [],
    ...(parameters.length ? { parameters } : {}),
    ...formBody(operation.form),
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
          description:
            'The access token from sign-up, sign-in or refresh, as `Token <access_token>` (the scheme the API was specified with).',
        },
        Bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'The same access token as `Bearer <access_token>` (RFC 6750): what OAuth clients and Supabase auth-js send.',
        },
      },
    },
  };
};
