/**
 * Metrics as CloudWatch embedded metric format (EMF): a JSON line on stdout whose `_aws` member
 * tells CloudWatch Logs which of its fields are metric values. No SDK call and no extra request:
 * the log line is the metric. Names and the namespace: lib/metric-names.ts.
 */
import type { APIGatewayProxyEventV2 as Event, APIGatewayProxyStructuredResultV2 as Result, Context } from 'aws-lambda';
import { requestIdOf } from './http/errors.ts';
import { type RequestRecord, currentRequest, withinRequest, writeLine } from './log.ts';
import { EVENT_METRICS, FUNCTION_DIMENSION, METRIC_NAMESPACE, REQUEST_METRICS } from './metric-names.ts';

export type EventMetric = (typeof EVENT_METRICS)[keyof typeof EVENT_METRICS];

const MILLISECONDS: ReadonlySet<string> = new Set([EVENT_METRICS.outboxLag, REQUEST_METRICS.duration]);

/** A metric's value: one number, or up to 100 values of the same metric (EMF's limit per member). */
type MetricValues = Readonly<Record<string, number | readonly number[]>>;

const directive = (values: MetricValues, dimensions: readonly string[]) => ({
  Namespace: METRIC_NAMESPACE,
  Dimensions: [dimensions],
  Metrics: Object.keys(values).map((Name) => ({ Name, Unit: MILLISECONDS.has(Name) ? 'Milliseconds' : 'Count' })),
});

/**
 * One EMF document: `values` become metrics (Count, or Milliseconds for durations) under
 * `dimensions`; `events` become metrics without dimensions (the domain events, one time series
 * each); `fields` stay plain log fields beside them.
 */
export const emfDocument = (
  values: MetricValues,
  {
    dimensions = {},
    events = {},
    fields = {},
    now = Date.now(),
  }: { dimensions?: Record<string, string>; events?: MetricValues; fields?: Record<string, unknown>; now?: number } = {},
): Record<string, unknown> => {
  const scoped = Object.keys(dimensions);
  const directives =
    scoped.length === 0
      ? [directive({ ...values, ...events }, [])]
      : [directive(values, scoped), ...(Object.keys(events).length > 0 ? [directive(events, [])] : [])];
  return { ...fields, ...dimensions, ...values, ...events, _aws: { Timestamp: now, CloudWatchMetrics: directives } };
};

/**
 * Records one domain event (or a duration, for the millisecond metrics). Inside an API request it
 * joins that request's line (one line per request, whatever happens in it); elsewhere (the
 * mailer, the sweepers) it is a line of its own.
 */
export const recordEvent = (name: EventMetric, value = 1): void => {
  const record = currentRequest();
  if (record) record.events.set(name, [...(record.events.get(name) ?? []), value]);
  else writeLine('INFO', { message: 'metric', ...emfDocument({ [name]: value }) });
};

/** A request's events as EMF values: counts add up, durations stay apart (so their percentiles hold). */
const eventValues = (events: RequestRecord['events']): Record<string, number | number[]> =>
  Object.fromEntries(
    [...events].map(([name, values]) => [name, MILLISECONDS.has(name) ? values.slice(0, 100) : values.reduce((sum, v) => sum + v, 0)]),
  );

type Handler = (event: Event, context: Context) => Promise<Result>;

interface Outcome {
  status: number;
  coldStart: boolean;
  ms: number;
}

/** The request line: the request's fields, and its metrics under dimension Function = `name`. */
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
  writeLine('INFO', emfDocument(values, { dimensions: { [FUNCTION_DIMENSION]: name }, events: eventValues(record.events), fields }));
};

// A process serves one function on Lambda; the local server runs them all in one, each loaded once.
const warm = new Set<string>();

/**
 * Serves each request of function `name` (route template `path`) within a record of its own, and
 * writes its one request line when the answer is ready (lib/log.ts): ids, route, status, error
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
