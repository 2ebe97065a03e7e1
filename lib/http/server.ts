import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2 as Event, APIGatewayProxyStructuredResultV2 as Result, Context } from 'aws-lambda';
import { AppError } from '#lib/core/errors.ts';
import { lambdaContext, toApiGatewayEvent } from './apigw.ts';
import { errorResponse, jsonResponse } from './errors.ts';
import { FALLBACK, FUNCTION_DEFAULTS, matchRoute } from './routes.ts';

type Handler = (event: Event, context: Context) => Promise<Result>;

/** API Gateway refuses payloads over 10 MB before any function runs. */
const GATEWAY_MAX_BYTES = 10 * 1024 * 1024;

const handlers = new Map<string, Promise<Handler>>();

/**
 * The function timeout the local server gives each invocation: the deployed one, unless
 * LOCAL_FUNCTION_TIMEOUT_SECONDS says otherwise. One process runs every request here, where Lambda
 * would run concurrent ones on instances of their own, so load tests may need more patience.
 */
const timeoutMs = (Number(process.env.LOCAL_FUNCTION_TIMEOUT_SECONDS) || FUNCTION_DEFAULTS.timeoutSeconds) * 1000;

/** The function the local server is running in this async context: lets tests attribute each DynamoDB request to its function. */
export const invocation = new AsyncLocalStorage<{ functionName: string }>();

/** The very module CDK bundles for this function, imported once like a warm Lambda. */
const loadHandler = (name: string): Promise<Handler> => {
  let loaded = handlers.get(name);
  if (!loaded) {
    loaded = import(new URL(`../../functions/${name}.ts`, import.meta.url).href).then((m: { handler: Handler }) => m.handler);
    handlers.set(name, loaded);
  }
  return loaded;
};

const readBody = (req: IncomingMessage): Promise<Buffer | null> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= GATEWAY_MAX_BYTES) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > GATEWAY_MAX_BYTES ? null : Buffer.concat(chunks)));
    req.on('error', reject);
  });

const send = (res: ServerResponse, result: Result): void => {
  res.writeHead(result.statusCode ?? 200, result.headers as Record<string, string>);
  res.end(result.body ?? '');
};

/**
 * Turns one HTTP request into the event API Gateway would send and calls the route's handler,
 * whose request line (./measured.ts) goes to this process's stdout as on Lambda.
 */
const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
  const method = req.method ?? 'GET';
  const path = new URL(req.url ?? '/', 'http://local').pathname;
  if (method === 'GET' && path === '/healthz') {
    return send(res, jsonResponse(200, { data: { status: 'ok' } }, 'healthz'));
  }
  const body = await readBody(req);
  if (body === null) return send(res, errorResponse(new AppError('body_too_large'), 'gateway'));

  const match = matchRoute(method, path);
  const found = match && 'route' in match ? match : null;
  const name = found ? found.route.name : FALLBACK;
  const pairs: [string, string][] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) pairs.push([req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string]);
  const event = toApiGatewayEvent(
    {
      method,
      url: req.url ?? '/',
      headers: pairs,
      body,
      sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
      host: req.headers.host ?? 'localhost',
    },
    found ? `${found.route.method} ${found.route.path}` : '$default',
    found?.params,
  );
  // An invocation id of its own, as on Lambda: the request line carries both (./measured.ts).
  const context = lambdaContext(`roster-${name}`, timeoutMs, randomUUID());
  const handler = await loadHandler(name);
  send(res, await invocation.run({ functionName: name }, () => handler(event, context)));
};

export interface LocalServer {
  url: string;
  close: () => Promise<void>;
}

/** Serves the API on `port` (0 picks a free one) through the same handlers the stack deploys. */
export const startLocalServer = async (port: number, host = '127.0.0.1'): Promise<LocalServer> => {
  const server: Server = createServer((req, res) => {
    serve(req, res).catch((error: unknown) => send(res, errorResponse(error, 'local-server')));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${bound}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
};
