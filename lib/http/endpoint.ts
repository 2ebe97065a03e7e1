import middy from '@middy/core';
import type { APIGatewayProxyEventV2 as Event, APIGatewayProxyStructuredResultV2 as Result, Context } from 'aws-lambda';
import type * as z from 'zod/mini';
import type { ClientInfo } from '../auth/session-items.ts';
import type { Actor } from '../auth/actor.ts';
import { tokenFromAuthorization, verifyAccessToken } from '../auth/tokens.ts';
import { AppError } from '../errors.ts';
import { noteRequest } from '../log.ts';
import { measured } from '../metrics.ts';
import { DEFAULT_LIMIT, Page } from '../pagination.ts';
import { bodyText, parseJsonObject, requireJsonType } from './body.ts';
import { errorResponse, jsonResponse, requestIdOf } from './errors.ts';
import { type PathParams, pathParams } from './params.ts';
import { type BodyOf, type QueryOf, requestOf } from './requests.ts';
import { type RouteName, routeNamed } from './routes.ts';
import { validate } from './validation.ts';

/** What a handler gets: the checked inputs of one request. */
export interface Call<B, Q> {
  /** The caller; only on routes with `auth: true`. */
  actor: Actor;
  body: B;
  query: Q;
  params: PathParams;
  client: ClientInfo;
  now: Date;
}

interface State {
  actor?: Actor;
  text?: string;
  json?: Record<string, unknown>;
}
type RosterContext = Context & { roster: State };

/** Absolute URL of the next page, as GitHub's `Link: <…>; rel="next"`. */
const nextLink = (event: Event, limit: number, cursor: string): string => {
  const proto = event.headers['x-forwarded-proto'] ?? 'https';
  const query = new URLSearchParams({ limit: String(limit), cursor });
  return `<${proto}://${event.requestContext.domainName}${event.rawPath}?${query}>; rel="next"`;
};

interface Stage {
  before: (request: { event: Event; context: RosterContext }) => void | Promise<void>;
}

/** 413 for an oversized body and 415 for a declared non-JSON type, before anything costs more. */
const guardBody = (hasBody: boolean): Stage => ({
  before: ({ event, context }) => {
    const text = bodyText(event);
    if (!hasBody) return;
    requireJsonType(event);
    context.roster.text = text;
  },
});

/** Verifies the access token; a route without auth never looks at the header. */
const authenticate = (required: boolean): Stage => ({
  before: async ({ event, context }) => {
    if (!required) return;
    const actor = await verifyAccessToken(tokenFromAuthorization(event.headers.authorization));
    context.roster.actor = actor;
    noteRequest({ userId: actor.userUuid });
  },
});

/** Parses the JSON body only for a caller that got this far: anonymous callers learn nothing of its rules. */
const parseBody = (hasBody: boolean): Stage => ({
  before: ({ context }) => {
    if (hasBody) context.roster.json = parseJsonObject(context.roster.text ?? '');
  },
});

/**
 * The Middy chain of every function: body checks, authentication, validation with the route's
 * zod schemas (requests.ts), the use
 * case, then `{ data }` (plus `Link` for pages). Errors of any step become the contract's
 * envelope in one place. A function about to time out answers 503 instead of a gateway 5xx.
 * Each request writes one log line with its metrics (lib/metrics.ts `measured`).
 */
export const endpoint = <N extends RouteName>(name: N, run: (call: Call<BodyOf<N>, QueryOf<N>>) => Promise<unknown>) => {
  type B = BodyOf<N>;
  type Q = QueryOf<N>;
  const route = routeNamed(name);
  const schemas = requestOf(name) as { body?: z.ZodMiniType<B>; query?: z.ZodMiniType<Q> };
  const chain = middy<Event, Result, Error, RosterContext>({
    timeoutEarlyInMillis: 500,
    timeoutEarlyResponse: () => {
      throw new AppError('unavailable', 'The request took too long; try again.', { headers: { 'Retry-After': '1' } });
    },
  })
    .before(({ context }) => {
      context.roster = {};
    })
    .use(guardBody(route.body))
    .use(authenticate(route.auth))
    .use(parseBody(route.body))
    .use({
      onError: (request) => {
        request.response = errorResponse(request.error, requestIdOf(request.event, request.context));
      },
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
      const result = await run({
        actor: context.roster.actor as Actor,
        body,
        query,
        params,
        client: { ip: event.requestContext.http.sourceIp, userAgent: event.headers['user-agent'] },
        now: new Date(),
      });
      // Every authenticated use case checks the session with its first read; one that did not is a
      // bug, and must not answer (the HTTP suite calls every route, so it shows up there).
      if (route.auth && !context.roster.actor?.sessionChecked) throw new Error(`${route.name} did not check the session`);
      if (result instanceof Page) {
        const limit = (query as { limit?: number } | undefined)?.limit ?? DEFAULT_LIMIT;
        const link = result.cursor ? { link: nextLink(event, limit, result.cursor) } : undefined;
        return jsonResponse(200, { data: result.items }, requestId, link);
      }
      return jsonResponse(route.status, { data: result }, requestId);
    });
  return measured(name, route.path, chain);
};
