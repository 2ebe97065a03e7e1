/**
 * Every alarm can fire: each metric it reads is published in the case it guards. For AWS's
 * metrics, the alarm must read a (namespace, metric, dimension set) AWS publishes, from the checked
 * table below; for Roster's own (EMF), the code that emits them runs here, in the case the alarm
 * guards (a 5xx answer, a 429 answer), and the alarm must read a name and dimension set it emitted.
 * And where a metric may be missing (no requests, an idle queue), the alarm must still see the case:
 * each metric of a sum or comparison is FILL-wrapped (monitoring.test.ts), and each alarm's
 * treatment of missing data is the one its metric's publishing calls for.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { METRIC_NAMESPACE, ROUTE_GROUP_DIMENSION, routeGroup } from '#lib/core/metric-names.ts';
import { lambdaContext, toApiGatewayEvent } from '#lib/http/apigw.ts';
import { measured } from '#lib/http/measured.ts';
import { FALLBACK, ROUTES } from '#lib/http/routes.ts';
import { type Resource, synth } from './template.ts';

/**
 * What AWS publishes: each (namespace, metric, dimension names) an alarm of Roster reads, and when.
 * - API Gateway, HTTP APIs (https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-metrics.html):
 *   4xx, 5xx, Count, IntegrationLatency, Latency, DataProcessed, by ApiId, by ApiId and Stage, and by
 *   route only with detailed metrics (charged per series), which Roster does not turn on.
 * - Lambda (https://docs.aws.amazon.com/lambda/latest/dg/monitoring-metrics-types.html): Errors,
 *   Duration, IteratorAge by FunctionName, and by FunctionName and Resource for an alias or version;
 *   each invocation reports them (Errors 0 or more), IteratorAge each batch of a stream.
 * - DynamoDB (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/metrics-dimensions.html):
 *   SystemErrors by TableName and Operation; ReadThrottleEvents and WriteThrottleEvents by TableName
 *   (the table's own, not its indexes') and by TableName and GlobalSecondaryIndexName.
 * - SQS (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-available-cloudwatch-metrics.html):
 *   ApproximateNumberOfMessagesVisible and ApproximateAgeOfOldestMessage by QueueName, every minute
 *   while the queue is active (it holds messages or is accessed, for up to six hours after).
 * - SES (https://docs.aws.amazon.com/ses/latest/dg/reputationdashboard-cloudwatch-alarm.html):
 *   Reputation.BounceRate and Reputation.ComplaintRate for the account, without dimensions.
 */
const PUBLISHED_BY_AWS: readonly { namespace: string; metric: string; dimensions: readonly string[]; when: string }[] = [
  { namespace: 'AWS/ApiGateway', metric: '5xx', dimensions: ['ApiId'], when: 'each minute with requests: the answers with a 5xx status' },
  { namespace: 'AWS/ApiGateway', metric: 'Count', dimensions: ['ApiId'], when: 'each minute with requests' },
  { namespace: 'AWS/ApiGateway', metric: 'Latency', dimensions: ['ApiId'], when: 'each answered request' },
  { namespace: 'AWS/Lambda', metric: 'Errors', dimensions: ['FunctionName'], when: 'each invocation; a failed one counts 1' },
  {
    namespace: 'AWS/Lambda',
    metric: 'Errors',
    dimensions: ['FunctionName', 'Resource'],
    when: 'each invocation through the alias; a failed one counts 1',
  },
  { namespace: 'AWS/Lambda', metric: 'Duration', dimensions: ['FunctionName'], when: 'each invocation, a timed-out one included' },
  { namespace: 'AWS/Lambda', metric: 'Duration', dimensions: ['FunctionName', 'Resource'], when: 'each invocation through the alias' },
  { namespace: 'AWS/Lambda', metric: 'IteratorAge', dimensions: ['FunctionName'], when: 'each batch read from a stream' },
  {
    namespace: 'AWS/DynamoDB',
    metric: 'SystemErrors',
    dimensions: ['Operation', 'TableName'],
    when: 'each minute DynamoDB answered a 500',
  },
  {
    namespace: 'AWS/DynamoDB',
    metric: 'ReadThrottleEvents',
    dimensions: ['TableName'],
    when: "each minute the table's reads were throttled",
  },
  {
    namespace: 'AWS/DynamoDB',
    metric: 'WriteThrottleEvents',
    dimensions: ['TableName'],
    when: "each minute the table's writes were throttled",
  },
  {
    namespace: 'AWS/SQS',
    metric: 'ApproximateNumberOfMessagesVisible',
    dimensions: ['QueueName'],
    when: 'each minute while the queue is active, as it is once a message arrives',
  },
  {
    namespace: 'AWS/SQS',
    metric: 'ApproximateAgeOfOldestMessage',
    dimensions: ['QueueName'],
    when: 'each minute while the queue is active, as a mapped queue always is (Lambda polls it)',
  },
  { namespace: 'AWS/SES', metric: 'Reputation.BounceRate', dimensions: [], when: 'as the account sends and mail bounces' },
  { namespace: 'AWS/SES', metric: 'Reputation.ComplaintRate', dimensions: [], when: 'as the account sends and recipients complain' },
];

interface Read {
  namespace: string;
  metric: string;
  dimensions: Record<string, unknown>;
}

/** The metrics an alarm reads: its one metric, or its metric math's MetricStat queries. */
const readsOf = (properties: Record<string, unknown>): Read[] => {
  const dims = (list: unknown): Record<string, unknown> =>
    Object.fromEntries(((list ?? []) as { Name: string; Value: unknown }[]).map((d) => [d.Name, d.Value]));
  const queries = properties.Metrics as
    { MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions?: unknown } } }[] | undefined;
  if (!queries)
    return [{ namespace: String(properties.Namespace), metric: String(properties.MetricName), dimensions: dims(properties.Dimensions) }];
  return queries.flatMap((q) =>
    q.MetricStat
      ? [
          {
            namespace: q.MetricStat.Metric.Namespace,
            metric: q.MetricStat.Metric.MetricName,
            dimensions: dims(q.MetricStat.Metric.Dimensions),
          },
        ]
      : [],
  );
};

/** Every EMF metric a request line emits, as namespace, name and dimension values, for a request of `name` answered `status`. */
const emitted = async (name: string, status: number): Promise<Read[]> => {
  const lines: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => lines.push(String(chunk)) > 0);
  const event = toApiGatewayEvent(
    { method: 'GET', url: '/x', headers: [], body: Buffer.alloc(0), sourceIp: '127.0.0.1', host: 'localhost' },
    'GET /x',
    {},
  ) as APIGatewayProxyEventV2;
  const answer: APIGatewayProxyStructuredResultV2 = { statusCode: status, body: '{}' };
  await measured(name, '/x', async () => answer)(event, lambdaContext(`roster-${name}`, 10_000, 'lambda-id'));
  vi.restoreAllMocks();
  return lines.flatMap((line) => {
    const doc = JSON.parse(line) as Record<string, unknown> & {
      _aws?: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[] };
    };
    return (doc._aws?.CloudWatchMetrics ?? [])
      .flatMap((d) =>
        d.Metrics.flatMap((m) =>
          d.Dimensions.map((set) => ({
            namespace: d.Namespace,
            metric: m.Name,
            dimensions: Object.fromEntries(set.map((k) => [k, doc[k]])),
            value: doc[m.Name],
          })),
        ),
      )
      .filter((read) => read.value !== 0);
  });
};

/** The case each of Roster's own metrics guards: the answer that must publish it (non-zero). */
const GUARDED_BY: Readonly<Record<string, number>> = { ServerErrors: 503, RateLimited: 429 };

const CONFIGURATIONS = [
  { label: 'defaults', context: {} },
  { label: 'gradual deploys, SES', context: { gradualDeploy: 'true', sesDomain: 'example.com' } },
  { label: 'function alarms', context: { functionAlarms: 'true' } },
];

describe.each(CONFIGURATIONS)('with $label, every alarm reads metrics that are published when it should fire', ({ context }) => {
  const { ofType } = synth(context);
  const alarms = ofType('AWS::CloudWatch::Alarm').map(([, r]: [string, Resource]) => r.Properties);
  const names = alarms.map((a) => String(a.AlarmName));

  beforeEach(() => vi.stubEnv('AWS_LAMBDA_LOG_LEVEL', 'INFO'));
  afterEach(() => vi.unstubAllEnvs());

  it.each(names)('%s', async (alarmName) => {
    const alarm = alarms.find((a) => a.AlarmName === alarmName) as Record<string, unknown>;
    const reads = readsOf(alarm);
    expect(reads.length).toBeGreaterThan(0);
    for (const read of reads) {
      if (read.namespace === METRIC_NAMESPACE) {
        // Run the code that publishes it, in the case the alarm guards, for the route group it reads.
        const status = GUARDED_BY[read.metric];
        expect(status, `${read.metric}: no case publishes it`).toBeDefined();
        const group = read.dimensions[ROUTE_GROUP_DIMENSION];
        const fn = group === undefined ? FALLBACK : [...ROUTES.map((r) => r.name), FALLBACK].find((n) => routeGroup(n) === group);
        expect(fn, `no function of route group ${String(group)}`).toBeDefined();
        const published = await emitted(fn as string, status as number);
        expect(
          published.map(({ namespace, metric, dimensions }) => ({ namespace, metric, dimensions })),
          alarmName,
        ).toContainEqual(read);
      } else {
        const dimensions = Object.keys(read.dimensions).sort();
        const entry = PUBLISHED_BY_AWS.find(
          (p) => p.namespace === read.namespace && p.metric === read.metric && p.dimensions.join() === dimensions.join(),
        );
        expect(
          entry,
          `${alarmName}: ${read.namespace} ${read.metric} by ${dimensions.join(', ') || 'nothing'} is not published`,
        ).toBeDefined();
      }
    }
    // A metric published only while something happens: no datapoints means the case is absent
    // (notBreaching), except for queues and SES, which go quiet with the case still there (ignore).
    const quiet = reads.some(
      (r) => (r.namespace === 'AWS/SQS' && r.metric === 'ApproximateNumberOfMessagesVisible') || r.namespace === 'AWS/SES',
    );
    expect(alarm.TreatMissingData, alarmName).toBe(quiet ? 'ignore' : 'notBreaching');
  });
});
