/**
 * Metrics as CloudWatch embedded metric format (EMF): a JSON line on stdout whose `_aws` member
 * tells CloudWatch Logs which of its fields are metric values. No SDK call and no extra request:
 * the log line is the metric. Names, the namespace and which values are published: lib/core/metric-names.ts.
 */
import { currentRequest, writeLine } from './log.ts';
import { EVENT_METRICS, METRIC_NAMESPACE, PUBLISHED_REQUEST_METRICS, REQUEST_METRICS, UNPUBLISHED_EVENTS } from './metric-names.ts';

export type EventMetric = (typeof EVENT_METRICS)[keyof typeof EVENT_METRICS];

const MILLISECONDS: ReadonlySet<string> = new Set([EVENT_METRICS.outboxLag, REQUEST_METRICS.duration]);

/** Whether metric `name` is a duration (Milliseconds, its values kept apart for percentiles) rather than a count. */
export const isDuration = (name: string): boolean => MILLISECONDS.has(name);

/** A metric's value: one number, or up to 100 values of the same metric (EMF's limit per member). */
type MetricValues = Readonly<Record<string, number | readonly number[]>>;

interface Directive {
  Namespace: string;
  Dimensions: string[][];
  Metrics: { Name: string; Unit: string }[];
}

const directive = (names: readonly string[], dimensions: readonly string[]): Directive => ({
  Namespace: METRIC_NAMESPACE,
  Dimensions: [[...dimensions]],
  Metrics: names.map((Name) => ({ Name, Unit: MILLISECONDS.has(Name) ? 'Milliseconds' : 'Count' })),
});

const published = PUBLISHED_REQUEST_METRICS as Readonly<Record<string, readonly string[] | undefined>>;

/**
 * One log line's document. Of `values`, those PUBLISHED_REQUEST_METRICS names become metrics under
 * their dimension set (whose values `dimensions` gives), the others stay fields; `events` become
 * metrics without dimensions (the domain events, one series each) unless UNPUBLISHED; `fields`
 * stay plain log fields beside them. A document that publishes nothing has no `_aws` member.
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
  const bySet = new Map<string, { dimensions: readonly string[]; names: string[] }>();
  const add = (name: string, set: readonly string[]): void => {
    const key = set.join(',');
    const entry = bySet.get(key) ?? { dimensions: set, names: [] };
    entry.names.push(name);
    bySet.set(key, entry);
  };
  for (const name of Object.keys(values)) {
    const set = published[name];
    if (!set) continue;
    const missing = set.filter((dimension) => dimensions[dimension] === undefined);
    if (missing.length > 0) throw new Error(`metric ${name} needs the dimension ${missing.join(', ')}`);
    add(name, set);
  }
  for (const name of Object.keys(events)) if (!UNPUBLISHED_EVENTS.has(name)) add(name, []);
  // Dimensioned sets first, the dimensionless one last.
  const directives = [...bySet.values()]
    .sort((a, b) => b.dimensions.length - a.dimensions.length)
    .map((entry) => directive(entry.names, entry.dimensions));
  const metrics = directives.length > 0 ? { _aws: { Timestamp: now, CloudWatchMetrics: directives } } : {};
  return { ...fields, ...dimensions, ...values, ...events, ...metrics };
};

/**
 * Records one domain event (or a duration, for the millisecond metrics). Inside an API request it
 * joins that request's line (one line per request, whatever happens in it); elsewhere (the
 * mailer, the sweepers) it is a line of its own.
 */
export const recordEvent = (name: EventMetric, value = 1): void => {
  const record = currentRequest();
  if (record) record.events.set(name, [...(record.events.get(name) ?? []), value]);
  else writeLine('INFO', { message: 'metric', ...emfDocument({}, { events: { [name]: value } }) });
};
