import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2 as Event, Context } from 'aws-lambda';

/** One HTTP request as the local server received it. */
export interface RawRequest {
  method: string;
  /** Path and query string, as on the request line. */
  url: string;
  /** Header names and values in arrival order (node's rawHeaders, paired). */
  headers: [string, string][];
  body: Buffer;
  sourceIp: string;
  host: string;
}

/** Bodies API Gateway passes as text when they are valid UTF-8; anything else arrives base64-encoded. */
const TEXT_TYPE = /^(text\/|application\/([a-z0-9.+-]+\+)?(json|xml|x-www-form-urlencoded)\b)/i;

/**
 * The payload-2.0 event API Gateway's HTTP API sends a Lambda integration: lowercase header
 * names, repeated headers and query parameters joined with commas, cookies apart.
 */
export const toApiGatewayEvent = (req: RawRequest, routeKey: string, pathParameters?: Record<string, string>): Event => {
  const url = new URL(req.url, 'http://local');
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  for (const [name, value] of req.headers) {
    const key = name.toLowerCase();
    if (key === 'cookie') cookies.push(...value.split(/;\s*/));
    else headers[key] = key in headers ? `${headers[key]},${value}` : value;
  }
  headers['x-forwarded-for'] = req.sourceIp;
  headers['x-forwarded-proto'] = 'http';
  const query: Record<string, string> = {};
  for (const [key, value] of url.searchParams) query[key] = key in query ? `${query[key]},${value}` : value;
  const binary = req.body.length > 0 && (!TEXT_TYPE.test(headers['content-type'] ?? 'application/json') || !isUtf8(req.body));
  const now = new Date();
  return {
    version: '2.0',
    routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    ...(cookies.length ? { cookies } : {}),
    headers,
    ...(Object.keys(query).length ? { queryStringParameters: query } : {}),
    ...(pathParameters && Object.keys(pathParameters).length ? { pathParameters } : {}),
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: req.host,
      domainPrefix: req.host.split('.')[0] ?? req.host,
      http: {
        method: req.method,
        path: url.pathname,
        protocol: 'HTTP/1.1',
        sourceIp: req.sourceIp,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    ...(req.body.length ? { body: binary ? req.body.toString('base64') : req.body.toString('utf8') } : {}),
    isBase64Encoded: binary,
  };
};

/** A Lambda context whose remaining time counts down from the function's configured timeout. */
export const lambdaContext = (functionName: string, timeoutMs: number, requestId: string): Context => {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
};
