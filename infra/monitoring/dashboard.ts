import { Duration, type Stack } from 'aws-cdk-lib';
import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  AlarmStatusWidget,
  Column,
  GraphWidget,
  type IAlarm,
  type IMetric,
  type IWidget,
  MathExpression,
  Metric,
  Row,
  TextWidget,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { EVENT_METRICS, REQUEST_METRICS } from '#lib/core/metric-names.ts';
import {
  FIVE_MINUTES,
  ONE_MINUTE,
  TABLE_OPERATIONS,
  type WatchedFunction,
  type WatchedQueue,
  type WatchedStream,
  emf,
  routeGroup,
} from './metrics.ts';
import { RUNBOOK } from './runbook.ts';

/** The dashboard's order of route groups; others follow in the order they were watched. */
const GROUP_ORDER = ['auth', 'teams', 'members', 'invites', 'my-invites', 'docs'];

/** Everything the Monitoring construct was asked to watch: the dashboard (`-c dashboard=true`) shows each. */
export interface Watched {
  /** The alarms that notify: shown at the top. */
  readonly alarms: readonly IAlarm[];
  readonly functions: readonly WatchedFunction[];
  readonly deadLetters: readonly WatchedQueue[];
  readonly backlogs: readonly WatchedQueue[];
  readonly streams: readonly WatchedStream[];
  readonly api: IHttpApi | undefined;
  readonly table: { table: ITable; indexNames: readonly string[] } | undefined;
  /** Undefined until watchMail; then whether a configuration set reports bounces and complaints. */
  readonly mail: { configurationSet: boolean } | undefined;
}

/**
 * The dashboard: one row per section, only for what was watched. Built from the metrics Lambda,
 * API Gateway, DynamoDB and SQS publish for free and the few Roster publishes (a dashboard costs
 * per dashboard, not per metric).
 */
export const dashboardBody = (stack: Stack, w: Watched): string => {
  const rows: Row[] = [
    new Row(
      new TextWidget({
        width: 24,
        height: 2,
        markdown:
          `# ${stack.stackName}\n` +
          `The API, then each route group, the table, background work and domain events. Every alarm names its section of ${RUNBOOK}. ` +
          'Built by infra/monitoring/: console edits are lost on the next deploy.',
      }),
    ),
  ];
  if (w.alarms.length)
    rows.push(new Row(new AlarmStatusWidget({ title: 'Alarms that notify', alarms: [...w.alarms], width: 24, height: 3 })));
  rows.push(new Row(...overviewWidgets(w)));
  const groups = new Map<string, WatchedFunction[]>();
  for (const watched of w.functions.filter((f) => f.kind === 'api')) {
    const group = routeGroup(watched.name);
    groups.set(group, [...(groups.get(group) ?? []), watched]);
  }
  const rank = (group: string): number => (GROUP_ORDER.includes(group) ? GROUP_ORDER.indexOf(group) : GROUP_ORDER.length);
  for (const [group, fns] of [...groups].sort(([a], [b]) => rank(a) - rank(b))) rows.push(new Row(...groupWidgets(group, fns)));
  if (w.table) rows.push(new Row(...tableWidgets(w.table.table, w.table.indexNames)));
  const background = w.functions.filter((f) => f.kind !== 'api');
  if (background.length || w.streams.length || w.deadLetters.length || w.backlogs.length)
    rows.push(new Row(...backgroundWidgets(w, background)));
  rows.push(new Row(...eventWidgets(w)));
  const column = new Column(...rows);
  column.position(0, 0);
  return stack.toJsonString({ periodOverride: 'auto', widgets: column.toJson() });
};

/** The whole API and the account's Lambda capacity. */
const overviewWidgets = (w: Watched): IWidget[] => {
  const lambda = [
    graph(
      'Lambda concurrency (account)',
      [
        LambdaFunction.metricAll('ClaimedAccountConcurrency', { statistic: 'Maximum', period: ONE_MINUTE, label: 'claimed' }),
        LambdaFunction.metricAllConcurrentExecutions({ statistic: 'Maximum', period: ONE_MINUTE, label: 'running' }),
        new MathExpression({
          expression: 'SERVICE_QUOTA(concurrent)',
          usingMetrics: { concurrent: LambdaFunction.metricAllConcurrentExecutions({ statistic: 'Maximum', period: ONE_MINUTE }) },
          label: 'quota',
          period: ONE_MINUTE,
        }),
      ],
      [LambdaFunction.metricAllThrottles({ statistic: 'Sum', period: ONE_MINUTE, label: 'throttles (right)' })],
    ),
  ];
  const api = w.api;
  if (!api) return lambda;
  const sum = { statistic: 'Sum', period: ONE_MINUTE };
  return [
    graph('API requests and errors / min', [
      api.metricCount({ ...sum, label: 'requests' }),
      api.metricClientError({ ...sum, label: '4xx' }),
      api.metricServerError({ ...sum, label: '5xx' }),
    ]),
    graph(
      'API error rates',
      [
        new MathExpression({
          expression: '100 * FILL(server, 0) / requests',
          usingMetrics: { server: api.metricServerError(sum), requests: api.metricCount(sum) },
          label: '5xx %',
          period: ONE_MINUTE,
        }),
        new MathExpression({
          expression: '100 * FILL(client, 0) / requests',
          usingMetrics: { client: api.metricClientError(sum), requests: api.metricCount(sum) },
          label: '4xx % (429 included)',
          period: ONE_MINUTE,
        }),
      ],
      [emf(REQUEST_METRICS.rateLimited, undefined, { statistic: 'Average', period: ONE_MINUTE, label: '429 share (0-1, right)' })],
    ),
    graph('API latency (ms)', [
      api.metricLatency({ statistic: 'p50', period: ONE_MINUTE, label: 'p50' }),
      api.metricLatency({ statistic: 'p99', period: ONE_MINUTE, label: 'p99' }),
      api.metricIntegrationLatency({ statistic: 'p99', period: ONE_MINUTE, label: 'integration p99' }),
    ]),
    ...lambda,
  ];
};

/** Stream, queue and scheduled functions, the stream's readers, the work and dead-letter queues. */
const backgroundWidgets = (w: Watched, background: readonly WatchedFunction[]): IWidget[] => {
  const period = FIVE_MINUTES;
  return [
    graph(
      'Background: invocations, errors, throttles',
      background.flatMap(({ name, fn }) => [
        fn.metricInvocations({ statistic: 'Sum', period, label: `${name} invocations` }),
        fn.metricErrors({ statistic: 'Sum', period, label: `${name} errors` }),
        fn.metricThrottles({ statistic: 'Sum', period, label: `${name} throttles` }),
      ]),
    ),
    graph(
      'Background: p99 duration (ms)',
      background.map(({ name, fn }) => fn.metricDuration({ statistic: 'p99', period, label: name })),
    ),
    graph(
      'Stream iterator age (ms) and work queues (oldest, s)',
      w.streams.map(({ name, fn }) => fn.metric('IteratorAge', { statistic: 'Maximum', period: ONE_MINUTE, label: name })),
      w.backlogs.map(({ id, queue }) =>
        queue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', period, label: `${id} oldest (s, right)` }),
      ),
    ),
    graph(
      'Dead-letter queues',
      w.deadLetters.map(({ id, queue }) =>
        queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period, label: `${id} messages` }),
      ),
    ),
  ];
};

/** The domain events (EVENT_METRICS), and mail when watched. */
const eventWidgets = (w: Watched): IWidget[] => {
  const count = (metricName: string, label: string): Metric =>
    emf(metricName, undefined, { statistic: 'Sum', period: FIVE_MINUTES, label });
  const widgets: IWidget[] = [
    graph('Sign-ins and sign-ups / 5 min', [
      count(EVENT_METRICS.signInSucceeded, 'sign-ins'),
      count(EVENT_METRICS.signInFailed, 'failed'),
      count(EVENT_METRICS.signInLimited, 'limited'),
      count(EVENT_METRICS.signUps, 'sign-ups'),
      count(EVENT_METRICS.refreshReuseDetected, 'refresh reuse detected'),
    ]),
    graph('Invites / 5 min', [
      count(EVENT_METRICS.invitesCreated, 'created'),
      count(EVENT_METRICS.invitesSent, 'sent'),
      count(EVENT_METRICS.invitesAccepted, 'accepted'),
      count(EVENT_METRICS.invitesDeclined, 'declined'),
    ]),
    graph(
      'Outbox',
      [
        emf(EVENT_METRICS.outboxLag, undefined, { statistic: 'p50', period: FIVE_MINUTES, label: 'lag p50 (ms)' }),
        emf(EVENT_METRICS.outboxLag, undefined, { statistic: 'p99', period: FIVE_MINUTES, label: 'lag p99 (ms)' }),
      ],
      [count(EVENT_METRICS.outboxRedelivered, 'redelivered by the sweeper (right)')],
    ),
  ];
  if (w.mail) {
    // In percent; `id` names the query, unique in the widget.
    const reputation = (id: string, metricName: string, label: string): MathExpression =>
      new MathExpression({
        expression: `100 * ${id}`,
        usingMetrics: { [id]: new Metric({ namespace: 'AWS/SES', metricName, statistic: 'Maximum', period: Duration.minutes(15) }) },
        label,
        period: Duration.minutes(15),
      });
    widgets.push(
      graph(
        'Mail: bounces and complaints',
        w.mail.configurationSet
          ? [
              count(EVENT_METRICS.mailBounced, 'bounced'),
              count(EVENT_METRICS.mailComplained, 'complained'),
              count(EVENT_METRICS.mailSuppressed, 'suppressed (not sent)'),
            ]
          : [],
        [
          reputation('bounces', 'Reputation.BounceRate', 'SES bounce rate % (right)'),
          reputation('complaints', 'Reputation.ComplaintRate', 'SES complaint rate % (right)'),
        ],
      ),
    );
  }
  return widgets;
};

const graph = (title: string, left: IMetric[], right: IMetric[] = []): GraphWidget =>
  new GraphWidget({ title, left, right, width: 6, height: 6, ...(right.length ? { rightYAxis: { min: 0 } } : {}), leftYAxis: { min: 0 } });

/** Rate, errors, latency and saturation of one route group: Lambda's metrics per function, the group's published 5xx. */
const groupWidgets = (group: string, fns: readonly WatchedFunction[]): IWidget[] => {
  const period = ONE_MINUTE;
  return [
    graph(
      `${group}: requests / min`,
      fns.map(({ name, fn }) => fn.metricInvocations({ statistic: 'Sum', period, label: name })),
    ),
    graph(`${group}: 5xx answers and crashes / min`, [
      emf(REQUEST_METRICS.serverErrors, group, { statistic: 'Sum', period, label: `${group} 5xx answered` }),
      ...fns.map(({ name, fn }) => fn.metricErrors({ statistic: 'Sum', period, label: `${name} crashed` })),
    ]),
    graph(`${group}: latency p50 / p99 (ms)`, [
      ...fns.map(({ name, fn }) => fn.metricDuration({ statistic: 'p50', period, label: `${name} p50` })),
      ...fns.map(({ name, fn }) => fn.metricDuration({ statistic: 'p99', period, label: `${name} p99` })),
    ]),
    graph(
      `${group}: Lambda throttles / concurrency`,
      fns.map(({ name, fn }) => fn.metricThrottles({ statistic: 'Sum', period, label: `${name} throttles` })),
      fns.map(({ name, fn }) => fn.metric('ConcurrentExecutions', { statistic: 'Maximum', period, label: `${name} concurrency (right)` })),
    ),
  ];
};

/** Consumed capacity, throttles and errors per operation and index, conflicts. */
const tableWidgets = (table: ITable, indexNames: readonly string[]): IWidget[] => {
  const period = FIVE_MINUTES;
  const onIndex = (metricName: string, indexName: string, label: string): Metric =>
    table.metric(metricName, {
      dimensionsMap: { TableName: table.tableName, GlobalSecondaryIndexName: indexName },
      statistic: 'Sum',
      period,
      label,
    });
  const perOperation = (metricName: string): MathExpression[] =>
    TABLE_OPERATIONS.map(
      (operation) =>
        new MathExpression({
          expression: `FILL(${operation.toLowerCase()}, 0)`,
          usingMetrics: {
            [operation.toLowerCase()]: table.metric(metricName, {
              dimensionsMap: { TableName: table.tableName, Operation: operation },
              statistic: 'Sum',
              period,
            }),
          },
          label: operation,
          period,
        }),
    );
  return [
    graph(
      'DynamoDB consumed capacity units / 5 min',
      [
        table.metricConsumedReadCapacityUnits({ statistic: 'Sum', period, label: 'table reads' }),
        ...indexNames.map((i) => onIndex('ConsumedReadCapacityUnits', i, `${i} reads`)),
      ],
      [
        table.metricConsumedWriteCapacityUnits({ statistic: 'Sum', period, label: 'table writes (right)' }),
        ...indexNames.map((i) => onIndex('ConsumedWriteCapacityUnits', i, `${i} writes (right)`)),
      ],
    ),
    graph('DynamoDB throttles by operation and index', [
      ...perOperation('ThrottledRequests'),
      ...indexNames.flatMap((i) => [
        onIndex('ReadThrottleEvents', i, `${i} read throttles`),
        onIndex('WriteThrottleEvents', i, `${i} write throttles`),
      ]),
    ]),
    graph('DynamoDB system errors by operation', perOperation('SystemErrors')),
    graph(
      'DynamoDB transaction conflicts / 5 min',
      [table.metric('TransactionConflict', { statistic: 'Sum', period, label: 'rejected for a conflict' })],
      [
        table.metric('SuccessfulRequestLatency', {
          dimensionsMap: { TableName: table.tableName, Operation: 'TransactWriteItems' },
          statistic: 'SampleCount',
          period,
          label: 'write transactions (right)',
        }),
      ],
    ),
  ];
};
