/**
 * Metrics as CloudWatch embedded metric format (EMF): a JSON line on stdout whose `_aws` member
 * tells CloudWatch Logs which of its fields are metric values. No SDK call and no extra request:
 * the log line is the metric. Names and the namespace: lib/core/metric-names.ts.
 */
import { currentRequest, writeLine } from './log.ts';
import { EVENT_METRICS, METRIC_NAMESPACE, REQUEST_METRICS } from './metric-names.ts';

export type EventMetric = (typeof EVENT_METRICS)[keyof typeof EVENT_METRICS];

const MILLISECONDS: ReadonlySet<string> = new Set([EVENT_METRICS.outboxLag, REQUEST_METRICS.duration]);

/** Whether metric `name` is a duration (Milliseconds, its values kept apart for percentiles) rather than a count. */
export const isDuration = (name: string): boolean => MILLISECONDS.has(name);

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
