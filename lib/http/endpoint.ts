import middy, { type MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2 as Event, APIGatewayProxyStructuredResultV2 as Result, Context } from 'aws-lambda';
import type * as z from 'zod/mini';
import { type Claims, type ClientInfo, claimsOf, verifyClaims } from '#lib/auth/session-items.ts';
import { tokenFromAuthorization } from '#lib/auth/tokens.ts';
import { AppError, serviceUnavailable } from '#lib/core/errors.ts';
import { noteRequest } from '#lib/core/log.ts';
import { DEFAULT_LIMIT, Page } from '#lib/core/pagination.ts';
import { parseJsonObject, requireBodySize, requireJsonType } from './body.ts';
import { errorResponse, jsonResponse, requestIdOf } from './errors.ts';
import type { HeldKey } from './idempotency-store.ts';
import { idempotency, settleHeld, stillRunning } from './idempotency.ts';
import { measured } from './measured.ts';
import { type PathParams, pathParams } from './params.ts';
import type { BodyOf, QueryOf } from './request-schemas.ts';
import { type Request, apiRequestOf } from './requests.ts';
import { type ROUTES, type RouteName, isIdempotent, routeNamed } from './routes.ts';
import { validate } from './validation.ts';

interface State {
  /** The access token's claims: a use case reads the session with them to learn its Actor (readAsActor). */
  actor?: Claims;
  json?: Record<string, unknown>;
  /** The `Idempotency-Key` claim this request holds (idempotency.ts). */
  held?: HeldKey;
  /** Set through `Call.notToKeep`: the answer is not stored under the request's key. */
  unkept?: true;
}
type RosterContext = Context & { roster: State };

/** Whether route N asks for a token, read from the route table's literal types. */
type AuthOf<N extends RouteName> = Extract<(typeof ROUTES)[number], { name: N }>['auth'];

/**
 * What a handler gets: the checked inputs of one request, and on routes with `auth: true` (only
 * there) the caller, as the authenticate stage stored it.
 */
export type Call<N extends RouteName> = {
  body: BodyOf<N>;
  query: QueryOf<N>;
  params: PathParams;
  client: ClientInfo;
  now: Date;
  /** Milliseconds left before the function times out: for work that must stop in time (bulk rows). */
  remainingMs: () => number;
  /** Marks this answer as not to be replayed under an `Idempotency-Key` (some of it should be retried). */
  notToKeep: () => void;
} & (AuthOf<N> extends true ? { actor: NonNullable<State['actor']> } : unknown);

/**
 * Absolute URL of the next page, as GitHub's `Link: <…>; rel="next"`: the list's own checked
 * parameters (a filter such as the audit log's `action`) as asked, `limit` and the new `cursor`.
 */
const nextLink = (event: Event, query: Record<string, unknown>, limit: number, cursor: string): string => {
  const proto = event.headers['x-forwarded-proto'] ?? 'https';
  const kept = Object.entries(query).filter(([name, value]) => name !== 'limit' && name !== 'cursor' && typeof value === 'string');
  const params = new URLSearchParams([...(kept as [string, string][]), ['limit', String(limit)], ['cursor', cursor]]);
  return `<${proto}://${event.requestContext.domainName}${event.rawPath}?${params}>; rel="next"`;
};

type Stage = MiddlewareObj<Event, Result, Error, RosterContext>;

/**
 * 413 for an oversized body (on every route) and 415 for a declared type other than JSON in
 * UTF-8, before anything costs more.
 */
const guardBody = (hasBody: boolean): Stage => ({
  before: ({ event }) => {
    requireBodySize(event);
    if (hasBody) requireJsonType(event);
  },
});

/**
 * The access token's claims, verified here when this process has the signing keys in memory; on a
 * cold start by the use case's first read (readAsActor reads the keys with it). A route without
 * auth never looks at the header.
 */
/** How a route answers an error: the contract's envelope, or GoTrue's on the Supabase-compatible routes. */
type ErrorAnswer = (error: unknown, requestId: string) => Result;

/**
 * How a family of routes reads requests and answers: the seed's API (`{ data }`, the contract's
 * errors, requests.ts) unless the function says otherwise (gotrue-endpoint.ts: GoTrue's wire).
 * Passed in, so that a function bundles only its own family's schemas and words.
 */
export interface Dialect {
  request: Request;
  error: ErrorAnswer;
  /** A success that is not a page. */
  success: (status: number, result: unknown, requestId: string) => Result;
}

const apiDialect = (name: RouteName): Dialect => ({
  request: apiRequestOf(name),
  error: errorResponse,
  success: (status, result, requestId) => jsonResponse(status, { data: result }, requestId),
});

const authenticate = (required: boolean, answerError: ErrorAnswer): Stage => ({
  before: async ({ event, context }) => {
    if (!required) return;
    const { claims, userId } = await claimsOf(tokenFromAuthorization(event.headers.authorization));
    context.roster.actor = claims;
    noteRequest({ userId });
  },
  // An error before a cold start's token was verified (a 404 path, a 422 body) is answered only to
  // a token that verifies: any other gets the 401 (or 503) a warm function gives.
  onError: async (request) => {
    const claims = request.context.roster.actor;
    // Failing to verify is itself the error: no second try (and key read) for the same answer.
    if (!claims || (request.error instanceof AppError && ['unauthorized', 'unavailable'].includes(request.error.code))) return;
    try {
      await verifyClaims(claims);
    } catch (error) {
      request.error = error as Error;
      request.response = answerError(error, requestIdOf(request.event, request.context));
    }
  },
});

/** Parses the JSON body only for a caller that got this far: anonymous callers learn nothing of its rules. */
const parseBody = (hasBody: boolean): Stage => ({
  before: async (request) => {
    if (hasBody) request.context.roster.json = await parseJsonObject(request);
  },
});

/**
 * The Middy chain of every function: body checks, authentication, the `Idempotency-Key` claim
 * (authenticated POSTs), validation with the route's zod schemas (requests.ts), the use case,
 * then `{ data }` (plus `Link` for pages). Errors of any step become the contract's envelope in
 * one place. A function about to time out answers 503 instead of a gateway 5xx.
 * Each request writes one log line with its metrics (./measured.ts).
 */
export const endpoint = <N extends RouteName>(name: N, run: (call: Call<N>) => Promise<unknown>, dialect: Dialect = apiDialect(name)) => {
  type B = BodyOf<N>;
  type Q = QueryOf<N>;
  const route = routeNamed(name);
  const schemas = dialect.request as { body?: z.ZodMiniType<B>; query?: z.ZodMiniType<Q> };
  const answerError = dialect.error;
  const chain = middy<Event, Result, Error, RosterContext>({
    timeoutEarlyInMillis: 500,
    timeoutEarlyResponse: () => {
      throw stillRunning(serviceUnavailable(1, 'The request took too long; try again.'));
    },
  })
    .before(({ context }) => {
      context.roster = {};
    })
    .use(guardBody(route.body))
    .use(authenticate(route.auth, answerError))
    .use(parseBody(route.body))
    .use(isIdempotent(route) ? [idempotency(route)] : [])
    // `.onError(fn)`, not `.use({ onError })`: an inline object's `request` is `any`, which would
    // make the handler's event and context `any` too.
    .onError((request) => {
      request.response = answerError(request.error, requestIdOf(request.event, request.context));
    })
    .handler(async (event, context) => {
      const requestId = requestIdOf(event, context);
      // Path first: a path that names nothing is 404 whatever the body says.
      const params = pathParams(event.pathParameters);
      const query = schemas.query ? validate(schemas.query, event.queryStringParameters ?? {}) : (undefined as Q);
      const body = schemas.body ? validate(schemas.body, context.roster.json ?? {}) : (undefined as B);
      // The team a request names: in its path, else (creating one) in its checked body.
      const team = params.slug ?? (body as { slug?: unknown } | undefined)?.slug;
      if (typeof team === 'string') noteRequest({ team });
      const client = { ip: event.requestContext.http.sourceIp, userAgent: event.headers['user-agent'] };
      const checked = {
        body,
        query,
        params,
        client,
        now: new Date(),
        remainingMs: () => context.getRemainingTimeInMillis(),
        notToKeep: () => {
          context.roster.unkept = true;
        },
      };
      // TypeScript cannot follow a generic N through AuthOf<N>; `route.auth` is its value at run time.
      const result = await run((route.auth ? { ...checked, actor: context.roster.actor } : checked) as Call<N>);
      // Nothing answers a token that has not verified: a no-op once readAsActor did (warm: at once),
      // a backstop for a use case that never read the session.
      if (context.roster.actor) await verifyClaims(context.roster.actor);
      let response: Result;
      if (result instanceof Page) {
        const limit = (query as { limit?: number } | undefined)?.limit ?? DEFAULT_LIMIT;
        const link = result.cursor ? { link: nextLink(event, query ?? {}, limit, result.cursor) } : undefined;
        response = jsonResponse(200, { data: result.items }, requestId, link);
      } else response = dialect.success(route.status, result, requestId);
      // Here, not in an `after` stage: a run that outlived its 503 (the time budget) still settles.
      await settleHeld(context.roster, response);
      return response;
    });
  // Lambda passes a bare Context; the chain's first `before` gives it `roster`.
  return measured(name, route.path, (event, context) => chain(event, context as RosterContext));
};
