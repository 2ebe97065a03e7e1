import { Agent, request as httpRequest } from 'node:http';
import type { APIGatewayProxyEventV2 as Event, APIGatewayProxyStructuredResultV2 as Result, Context } from 'aws-lambda';
import { lambdaContext, toApiGatewayEvent } from '#lib/http/apigw.ts';
import { FALLBACK, FUNCTION_DEFAULTS, ROUTES, matchRoute } from '#lib/http/routes.ts';

/** One API request as a client would send it. */
export interface ApiRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path and query string. */
  path: string;
  token?: string;
  json?: unknown;
  /** A form body (`application/x-www-form-urlencoded`), for the pages' POST. */
  form?: string;
  /** Sent as `Idempotency-Key`. */
  idempotencyKey?: string;
  /** Any other header, as a browser sends it (a page's cookie, Sec-Fetch-Site). */
  headers?: Record<string, string>;
}

export interface Reply {
  status: number;
  /** A redirect's target (a provider sign-in's 302s). */
  location?: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- seeding reads fields of known responses
  body: any;
}

type Handler = (event: Event, context: Context) => Promise<Result>;

const headersOf = (req: ApiRequest): Record<string, string> => ({
  accept: 'application/json',
  'user-agent': 'roster-bench',
  ...(req.json !== undefined ? { 'content-type': 'application/json' } : {}),
  ...(req.form !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
  ...(req.token ? { authorization: `Token ${req.token}` } : {}),
  ...(req.idempotencyKey ? { 'idempotency-key': req.idempotencyKey } : {}),
  ...req.headers,
});

/** The request's body as sent: its JSON, or its form. */
const bodyOf = (req: ApiRequest): string | undefined => (req.json !== undefined ? JSON.stringify(req.json) : req.form);

/** The function API Gateway would call for this request, and the payload-2.0 event it would send (as lib/http/server.ts builds it). */
export const toEvent = (req: ApiRequest): { name: string; event: Event } => {
  const pathname = new URL(req.path, 'http://local').pathname;
  const match = matchRoute(req.method, pathname);
  const found = match && 'route' in match ? match : null;
  const body = Buffer.from(bodyOf(req) ?? '');
  const event = toApiGatewayEvent(
    { method: req.method, url: req.path, headers: Object.entries(headersOf(req)), body, sourceIp: '127.0.0.1', host: 'localhost' },
    found ? `${found.route.method} ${found.route.path}` : '$default',
    found?.params,
  );
  return { name: found ? found.route.name : FALLBACK, event };
};

const handlers = new Map<string, Promise<Handler>>();

/** The module the local server imports for this function (the same instance, so warm like it). */
const loadHandler = (name: string): Promise<Handler> => {
  let loaded = handlers.get(name);
  if (!loaded) {
    loaded = import(new URL(`../functions/${name}.ts`, import.meta.url).href).then((m: { handler: Handler }) => m.handler);
    handlers.set(name, loaded);
  }
  return loaded;
};

const parse = (text: string | undefined): unknown => {
  try {
    return JSON.parse(text ?? '');
  } catch {
    return text;
  }
};

/** Calls the function in this process, as the local server would, and times the handler alone. */
export const invokeDirect = async (req: ApiRequest): Promise<Reply & { name: string; handlerMs: number; started: number }> => {
  const { name, event } = toEvent(req);
  const handler = await loadHandler(name);
  const context = lambdaContext(`roster-${name}`, FUNCTION_DEFAULTS.timeoutSeconds * 1000, event.requestContext.requestId);
  const started = performance.now();
  const result = await handler(event, context);
  const handlerMs = performance.now() - started;
  const location = result.headers?.location;
  return {
    name,
    status: result.statusCode ?? 200,
    body: parse(result.body),
    ...(typeof location === 'string' ? { location } : {}),
    handlerMs,
    started,
  };
};

export const callDirect = async (req: ApiRequest): Promise<Reply> => {
  const { status, body, location } = await invokeDirect(req);
  return { status, body, ...(location !== undefined ? { location } : {}) };
};

const READ_ACTIONS = new Set(['GetItem', 'BatchGetItem', 'Query']);

/**
 * Whether a request is a read for the targets: a GET whose function writes nothing. A provider
 * sign-in's GETs are writes (the browser can only be sent there): a flow made, a flow used up.
 */
export const isRead = (req: ApiRequest): boolean => {
  if (req.method !== 'GET') return false;
  const { name } = toEvent(req);
  const route = ROUTES.find((r) => r.name === name);
  return route === undefined || route.actions.every((action) => READ_ACTIONS.has(action));
};

/** Throws unless the reply has the status expected: seeding must not go on from a failed step. */
export const expectStatus = (reply: Reply, status: number, what: string): Reply => {
  if (reply.status !== status) throw new Error(`${what}: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply;
};

/** An HTTP client for the local server: keep-alive sockets, and node:http rather than fetch, to spend little CPU beside the server. */
export const httpClient = (baseUrl: string, sockets: number) => {
  const agent = new Agent({ keepAlive: true, maxSockets: sockets });
  const { hostname, port } = new URL(baseUrl);
  const send = (req: ApiRequest): Promise<number> =>
    new Promise((resolve, reject) => {
      const body = bodyOf(req);
      const outgoing = httpRequest(
        {
          agent,
          hostname,
          port,
          method: req.method,
          path: req.path,
          headers: { ...headersOf(req), ...(body ? { 'content-length': Buffer.byteLength(body) } : {}) },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
          res.on('error', reject);
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  return { send, close: () => agent.destroy() };
};
