/**
 * The request line of every API function: one EMF document per request (lib/core/metrics.ts).
 */
import type { APIGatewayProxyEventV2 as Event, APIGatewayProxyStructuredResultV2 as Result, Context } from 'aws-lambda';
import { type RequestRecord, withinRequest, writeLine } from '#lib/core/log.ts';
import { FUNCTION_FIELD, REQUEST_METRICS, ROUTE_GROUP_DIMENSION, routeGroup } from '#lib/core/metric-names.ts';
import { emfDocument, isDuration } from '#lib/core/metrics.ts';
import { requestIdOf } from './errors.ts';

/** A request's events as EMF values: counts add up, durations stay apart (so their percentiles hold). */
const eventValues = (events: RequestRecord['events']): Record<string, number | number[]> =>
  Object.fromEntries(
    [...events].map(([name, values]) => [name, isDuration(name) ? values.slice(0, 100) : values.reduce((sum, v) => sum + v, 0)]),
  );

type Handler = (event: Event, context: Context) => Promise<Result>;

interface Outcome {
  status: number;
  coldStart: boolean;
  ms: number;
}

/** The request line: the request's fields (`Function` = `name`), its 5xx published per route group, its 429 for the whole API. */
const writeRequestLine = (name: string, path: string, event: Event, record: RequestRecord, { status, coldStart, ms }: Outcome): void => {
  const { userId, team, errorCode, dynamodb } = record;
  const values = {
    [REQUEST_METRICS.requests]: 1,
    [REQUEST_METRICS.serverErrors]: status >= 500 ? 1 : 0,
    [REQUEST_METRICS.rateLimited]: status === 429 ? 1 : 0,
    [REQUEST_METRICS.duration]: Math.round(ms * 100) / 100,
    [REQUEST_METRICS.dynamodbRequests]: dynamodb.requests,
    [REQUEST_METRICS.dynamodbReadUnits]: dynamodb.readUnits,
    [REQUEST_METRICS.dynamodbWriteUnits]: dynamodb.writeUnits,
  };
  const fields = {
    message: 'request',
    [FUNCTION_FIELD]: name,
    requestId: record.requestId,
    awsRequestId: record.awsRequestId,
    method: event.requestContext.http.method,
    path,
    status,
    coldStart,
    ...(userId ? { userId } : {}),
    ...(team ? { team } : {}),
    ...(errorCode ? { errorCode } : {}),
  };
  writeLine(
    'INFO',
    emfDocument(values, { dimensions: { [ROUTE_GROUP_DIMENSION]: routeGroup(name) }, events: eventValues(record.events), fields }),
  );
};

// A process serves one function on Lambda; the local server runs them all in one, each loaded once.
const warm = new Set<string>();

/**
 * Serves each request of function `name` (route template `path`) within a record of its own, and
 * writes its one request line when the answer is ready (lib/core/log.ts): ids, route, status, error
 * code, caller and team where known, whether the process was cold, and as EMF metrics the
 * request, its 5xx or 429, its duration, its DynamoDB requests and units (lib/db/client.ts counts
 * them), and the domain events recorded meanwhile.
 */
export const measured =
  (name: string, path: string, handler: Handler): Handler =>
  async (event, context) => {
    const started = performance.now();
    const coldStart = !warm.has(name);
    warm.add(name);
    const record: RequestRecord = {
      requestId: requestIdOf(event, context),
      awsRequestId: context.awsRequestId,
      sourceIp: event.requestContext?.http?.sourceIp,
      dynamodb: { requests: 0, readUnits: 0, writeUnits: 0 },
      events: new Map(),
    };
    // Middy answers every error; should anything escape it, Lambda reports a failed invocation (a 5xx).
    let status = 500;
    try {
      const result = await withinRequest(record, () => handler(event, context));
      status = result.statusCode ?? 200;
      return result;
    } finally {
      writeRequestLine(name, path, event, record, { status, coldStart, ms: performance.now() - started });
    }
  };
