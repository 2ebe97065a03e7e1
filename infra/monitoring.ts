/**
 * Roster's alarms and dashboard, as one construct. Every alarm notifies one SNS topic (on ALARM and
 * on OK), names its runbook section in docs/operations.md, and is built so that it can fire:
 * summed metrics are FILL-wrapped, API functions are watched through the EMF metrics the code
 * emits (lib/metric-names.ts) since Middy turns their errors into answers.
 */
import { ArnFormat, Duration, Lazy, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Alarm,
  AlarmStatusWidget,
  CfnDashboard,
  Column,
  ComparisonOperator,
  GraphWidget,
  type IAlarm,
  type IMetric,
  type IWidget,
  MathExpression,
  Metric,
  type MetricOptions,
  Row,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Function as LambdaFunction, type IFunction } from 'aws-cdk-lib/aws-lambda';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { INVITE_SWEEP, MAIL_EVENTS, OUTBOX_SWEEP, TEAM_CLEANUP } from '../lib/background.ts';
import { ROUTES } from '../lib/http/routes.ts';
import { EVENT_METRICS, FUNCTION_DIMENSION, METRIC_NAMESPACE, REQUEST_METRICS } from '../lib/metric-names.ts';

export interface MonitoringProps {
  /** An address subscribed to the alarm topic (`-c alarmEmail=…`); without it the topic has no subscriber. */
  readonly alarmEmail?: string;
}

export interface WatchedFunction {
  /** The handler name: a route name, FALLBACK, or a background function's name (also the EMF `Function` dimension). */
  readonly name: string;
  readonly fn: IFunction;
  readonly timeout: Duration;
  readonly kind: 'api' | 'stream' | 'queue' | 'schedule' | 'rotation' | 'sns';
  /**
   * For a function that stops itself before its timeout (team cleanup, the sweepers: timeout minus
   * their RESERVE_MS): a run that has work left lasts about this long by design, so the duration
   * alarm sits halfway between it and the timeout instead of at 80% of the timeout.
   */
  readonly budget?: Duration;
}

/** The runbook; each alarm's description ends with `Runbook: docs/operations.md#<section>`. */
export const RUNBOOK = 'docs/operations.md';

/**
 * One section of the runbook per kind of alarm (the anchor is the key), and the first thing to do,
 * which every alarm of that kind carries in its description (CloudWatch sends it in the e-mail).
 */
export const RUNBOOK_SECTIONS = {
  'function-5xx':
    "Read the function's log group for error lines (error code, stack) since the alarm; a gradual deploy rolls itself back, otherwise roll back or fix the cause (DynamoDB alarms first).",
  'function-errors':
    "Read the function's log group for the failed invocations; stream functions retry and then dead-letter, the sweepers catch up on the next tick once the cause is fixed.",
  'function-duration':
    'p99 duration is near the timeout: check DynamoDB latency and throttles, then the slow requests in the log group; timeouts turn into 5xx or retries.',
  'lambda-concurrency':
    'The region\'s Lambda concurrency is nearly used up: request a higher "Concurrent executions" quota (Service Quotas, L-B99A9384) or find the function that surged.',
  'lambda-throttles':
    "Some function in this account and region is throttled: find it (throttles per function on the dashboard), then compare account concurrency with the quota and the function's reserved concurrency; raise the quota or the reservation.",
  'api-5xx-rate':
    "Find the route group with 5xx on the dashboard, then its function's 5xx alarm and log group; 503 unavailable mostly means DynamoDB trouble.",
  'api-429-rate':
    'Many answers are 429 rate_limited: an attack on the credential routes (the limits work; consider a WAF) or limits too tight for real traffic (docs/scale.md).',
  'table-throttles':
    "DynamoDB throttled requests: a hot partition or the on-demand table's throughput ceiling; see throttles by operation on the dashboard.",
  'index-throttles': 'A global secondary index is throttled, which also throttles writes to the table: look for a hot index key.',
  'table-system-errors':
    'DynamoDB answered 5xx: check the AWS Health Dashboard for the region; the SDK retries, the API answers 503 meanwhile.',
  'transaction-conflicts':
    'Many write transactions conflict on the same items (contention): find the route with the most TransactionConflicts and its hot item.',
  'stream-iterator-age':
    'A stream function is falling behind or stuck on a record: read its log group, fix the cause; records that fail every retry go to its dead-letter queue.',
  'dead-letters':
    "Records failed every retry and wait in a dead-letter queue. They point into the table's stream, which keeps records 24 hours: fix the cause, then redrive (mail: npm run outbox:redrive).",
  'dead-letter-age':
    'A dead-letter record has waited 12 hours: its stream record expires at 24 hours, after which it cannot be redriven from the stream.',
  'webhook-backlog':
    "Webhook messages wait over an hour for their first attempts: deliveries fall behind (receivers that hang take 10 s each). Read the webhook-delivery log group; raise the queue mapping's MaximumConcurrency if the account allows.",
  'ses-bounce-rate':
    "The account's SES bounce rate reached the level where SES reviews the account: stop sending to bad addresses (suppression list), check invite sources.",
  'ses-complaint-rate':
    "The account's SES complaint rate reached the level where SES reviews the account: check what was mailed and to whom.",
} as const;

export type RunbookSection = keyof typeof RUNBOOK_SECTIONS;

/** The p99 duration alarm's threshold: 80% of the timeout (DURATION_SHARE), or halfway from a budget to the timeout. */
export const DURATION_SHARE = 0.8;

/** Alarms on metric math may read at most 10 metrics (a hard CloudWatch limit). */
const MAX_ALARM_METRICS = 10;

/** The rate alarms ignore periods with fewer requests than this: too few to make a rate. */
export const MIN_RATE_REQUESTS = 10;

const ONE_MINUTE = Duration.minutes(1);
const FIVE_MINUTES = Duration.minutes(5);

/** The operations the functions call on the table (for per-operation metrics): their grants, plus TransactWriteItems. */
export const TABLE_OPERATIONS: readonly string[] = [
  'TransactWriteItems',
  ...new Set(
    [...ROUTES.flatMap((route) => route.actions), ...[TEAM_CLEANUP, INVITE_SWEEP, OUTBOX_SWEEP, MAIL_EVENTS].flatMap((job) => job.actions)]
      // A condition check exists only inside a transaction: it has no metric of its own.
      .filter((action) => action !== 'ConditionCheckItem'),
  ),
];

/** Route group names that are not the name's first word: the lone routes join their kin. */
const GROUP_ALIASES: Readonly<Record<string, string>> = { jwks: 'auth', openapi: 'docs' };
/** The dashboard's order of route groups; others follow in the order they were watched. */
const GROUP_ORDER = ['auth', 'teams', 'members', 'invites', 'my-invites', 'docs'];

/** `teams-create` -> `teams`, `my-invites-list` -> `my-invites`, `jwks` -> `auth`, `fallback` -> `fallback`. */
export const routeGroup = (name: string): string => {
  const [first = name, second] = name.split('-');
  if (first === 'my' && second) return `my-${second}`;
  return GROUP_ALIASES[first] ?? first;
};

/** A Roster EMF metric (lib/metrics.ts), per function when `fn` is given. No unit: EMF sets it, and a wrong one hides the data. */
const emf = (metricName: string, fn: string | undefined, options: MetricOptions): Metric =>
  new Metric({ namespace: METRIC_NAMESPACE, metricName, ...(fn ? { dimensionsMap: { [FUNCTION_DIMENSION]: fn } } : {}), ...options });

/** `FILL(a, 0) + FILL(b, 0) + …`: a sum that has a value even when some (or all) of its metrics have none. */
const filledSum = (ids: readonly string[]): string => ids.map((id) => `FILL(${id}, 0)`).join(' + ');

/**
 * `100 * part / whole` in percent, 0 when the whole is under MIN_RATE_REQUESTS (no rate worth an
 * alarm, and no division by zero); both FILL-wrapped, so every period has a value.
 */
const filledRate = (part: string, whole: string): string =>
  `IF(FILL(${whole}, 0) >= ${MIN_RATE_REQUESTS}, 100 * FILL(${part}, 0) / FILL(${whole}, 0), 0)`;

interface AlarmSpec {
  /** Stable and unique: the construct id and, after the stack name, the alarm name. */
  readonly id: string;
  readonly section: RunbookSection;
  /** What happened, in one sentence, before the section's first step. */
  readonly summary: string;
  readonly metric: IMetric;
  readonly threshold: number;
  readonly evaluationPeriods: number;
  readonly datapointsToAlarm?: number;
  readonly treatMissingData: TreatMissingData;
}

interface WatchedQueue {
  readonly id: string;
  readonly queue: IQueue;
}

interface WatchedStream {
  readonly name: string;
  readonly fn: IFunction;
}

export class Monitoring extends Construct {
  /** Every alarm's action, on ALARM and on OK. */
  readonly topic: ITopic;
  /** The dashboard's name (for a console link: cloudwatch/home#dashboards/dashboard/<name>). */
  readonly dashboardName: string;

  private readonly action: SnsAction;
  private readonly functions: WatchedFunction[] = [];
  /** The alarms that are not per function: the dashboard shows their state at the top. */
  private readonly serviceAlarms: Alarm[] = [];
  private readonly queues: WatchedQueue[] = [];
  private readonly streams: WatchedStream[] = [];
  private api: IHttpApi | undefined;
  private table: { table: ITable; indexNames: readonly string[] } | undefined;
  /** Undefined until watchMail; then whether a configuration set reports bounces and complaints. */
  private mail: { configurationSet: boolean } | undefined;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const stack = Stack.of(this);

    // SNS encrypts with a key of ours: CloudWatch cannot publish to a topic under the AWS managed
    // SNS key, whose policy cannot grant it. Alarm messages are not data to keep: the key goes with the stack.
    const key = new Key(this, 'TopicKey', {
      description: `Encrypts the ${stack.stackName} alarm topic`,
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    key.addToResourcePolicy(
      new PolicyStatement({
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
      }),
    );
    const topic = new Topic(this, 'Topic', { displayName: `${stack.stackName} alarms`, masterKey: key, enforceSSL: true });
    // The topic policy replaces SNS's default one, so CloudWatch must be allowed by name: only
    // this account's alarms may publish.
    topic.addToResourcePolicy(
      new PolicyStatement({
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: {
          ArnLike: {
            'aws:SourceArn': stack.formatArn({
              service: 'cloudwatch',
              resource: 'alarm',
              resourceName: '*',
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          },
          StringEquals: { 'aws:SourceAccount': stack.account },
        },
      }),
    );
    if (props.alarmEmail) topic.addSubscription(new EmailSubscription(props.alarmEmail));
    this.topic = topic;
    this.action = new SnsAction(topic);

    this.watchAccount();

    const dashboard = new CfnDashboard(this, 'Dashboard', {
      // Laid out at synthesis, once every watch call has run, so the sections keep a fixed order.
      dashboardBody: Lazy.string({ produce: () => this.dashboardBody() }),
    });
    this.dashboardName = dashboard.ref;
  }

  /**
   * Alarms on one function; returns those a gradual deploy rolls back on (its 5xx or errors, and
   * its p99 duration; not throttles, which say nothing about the new code). The alarms are made in
   * `scope` (an API function's nested stack, beside the CodeDeploy group that rolls back on them),
   * notify this topic, and are named after it (`alarmName`); the dashboard, here, shows the function.
   */
  watchFunction(watched: WatchedFunction, scope: Construct = this): IAlarm[] {
    const { name, fn, kind } = watched;
    this.functions.push(watched);
    const retried = kind === 'stream' || kind === 'queue' || kind === 'schedule';
    const failures =
      kind === 'api'
        ? this.alarm(
            {
              id: `${name}-5xx`,
              section: 'function-5xx',
              summary: `The ${name} function answered 5xx, or crashed before answering, in 2 of the last 5 minutes.`,
              // Its Lambda Errors never counts an answered error (Middy's onError makes each one a
              // response): those are the EMF ServerErrors it emits per request. Errors still counts
              // what the handler never answered: timeouts, out of memory, a bundle that fails to load.
              metric: new MathExpression({
                expression: filledSum(['answered', 'crashed']),
                usingMetrics: {
                  answered: emf(REQUEST_METRICS.serverErrors, name, { statistic: 'Sum', period: ONE_MINUTE }),
                  crashed: fn.metricErrors({ statistic: 'Sum', period: ONE_MINUTE }),
                },
                label: `${name} 5xx and crashes`,
                period: ONE_MINUTE,
              }),
              // One-minute periods so a canary (minutes long) sees it; two minutes of five, so a lone
              // 503 during a DynamoDB blip does not page, a failing route does.
              threshold: 1,
              evaluationPeriods: 5,
              datapointsToAlarm: 2,
              // FILL gives every period a value; were there none, no requests means no errors.
              treatMissingData: TreatMissingData.NOT_BREACHING,
            },
            scope,
          )
        : this.alarm(
            {
              id: `${name}-errors`,
              section: 'function-errors',
              summary: `The ${name} function failed${retried ? ' in 2 of the last 3 five-minute periods' : ''}.`,
              // Background functions throw on failure, so Lambda's Errors counts them.
              metric: fn.metricErrors({ statistic: 'Sum', period: FIVE_MINUTES }),
              threshold: 1,
              // A stream batch or a queue message is retried and a sweeper's next tick catches up: page
              // on repeated failure. A rotation or a bounce notification that fails is lost: page at once.
              ...(retried ? { evaluationPeriods: 3, datapointsToAlarm: 2 } : { evaluationPeriods: 1 }),
              // No invocations, no errors.
              treatMissingData: TreatMissingData.NOT_BREACHING,
            },
            scope,
          );
    // No throttle alarm per function: \`lambda-throttles\` watches every function of the account and
    // region at once (a throttled API function also shows in \`api-5xx-rate\`), and the dashboard
    // shows throttles per function. One alarm per function cost 45 of CloudFormation's 500 resources.
    const thresholdMs = durationThresholdMs(watched);
    const slow = this.alarm(
      {
        id: `${name}-duration`,
        section: 'function-duration',
        summary: `The ${name} function's p99 duration reached ${Math.round(thresholdMs)} ms (timeout ${watched.timeout.toMilliseconds()} ms).`,
        // Lambda's own Duration, not the EMF one: it includes the invocations that time out.
        metric: fn.metricDuration({ statistic: 'p99', period: kind === 'api' ? ONE_MINUTE : FIVE_MINUTES }),
        threshold: thresholdMs,
        // API: 3 of 5 minutes (a canary sees it; one slow cold minute does not page). Background: 2 of 3 five-minute periods.
        ...(kind === 'api' ? { evaluationPeriods: 5, datapointsToAlarm: 3 } : { evaluationPeriods: 3, datapointsToAlarm: 2 }),
        // No invocations, nothing slow.
        treatMissingData: TreatMissingData.NOT_BREACHING,
      },
      scope,
    );
    return [failures, slow];
  }

  /** The API's 5xx and 429 rates. */
  watchApi(api: IHttpApi): void {
    this.api = api;
    this.serviceAlarms.push(
      this.alarm({
        id: 'api-5xx-rate',
        section: 'api-5xx-rate',
        summary: `At least 1% of the API's answers in 5 minutes were 5xx (periods under ${MIN_RATE_REQUESTS} requests are not rated).`,
        // The gateway's own count: it includes what no function metric sees (Lambda throttles,
        // integration timeouts). The contract allows no 500 and 503 only while DynamoDB is down.
        metric: new MathExpression({
          expression: filledRate('errors', 'requests'),
          usingMetrics: {
            errors: api.metricServerError({ statistic: 'Sum', period: FIVE_MINUTES }),
            requests: api.metricCount({ statistic: 'Sum', period: FIVE_MINUTES }),
          },
          label: '5xx (% of requests)',
          period: FIVE_MINUTES,
        }),
        threshold: 1,
        evaluationPeriods: 1,
        // FILL and IF give every period a value; were there none, no requests means no errors.
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      this.alarm({
        id: 'api-429-rate',
        section: 'api-429-rate',
        summary: "At least 10% of the API's requests were answered 429 rate_limited in each of 3 consecutive 5-minute periods.",
        metric: rateLimitedShare(FIVE_MINUTES),
        // Rate limiting is the limiter working: page only when it is broad and lasts 15 minutes.
        // A share, not a percentage: the query is the alarm's only metric (no math around it).
        threshold: 0.1,
        evaluationPeriods: 3,
        // No requests, no rate-limited answers.
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
  }

  /** DynamoDB throttles and system errors per operation and per index, and transaction conflicts. */
  watchTable(table: ITable, indexNames: readonly string[]): void {
    this.table = { table, indexNames };
    const perOperation = (metricName: string): Record<string, IMetric> =>
      Object.fromEntries(
        TABLE_OPERATIONS.map((operation) => [
          operation.toLowerCase(),
          table.metric(metricName, {
            dimensionsMap: { TableName: table.tableName, Operation: operation },
            statistic: 'Sum',
            period: FIVE_MINUTES,
          }),
        ]),
      );
    const summed = (metrics: Record<string, IMetric>, label: string): MathExpression => {
      if (Object.keys(metrics).length > MAX_ALARM_METRICS) throw new Error(`${label}: an alarm reads at most ${MAX_ALARM_METRICS} metrics`);
      return new MathExpression({ expression: filledSum(Object.keys(metrics)), usingMetrics: metrics, label, period: FIVE_MINUTES });
    };
    // The SDK retries throttles and system errors: page when they last (2 of 3 five-minute
    // periods), not for one retried blip. FILL gives every period a value: missing data cannot
    // occur; were it to, no requests means no throttles.
    const sustained = { threshold: 1, evaluationPeriods: 3, datapointsToAlarm: 2, treatMissingData: TreatMissingData.NOT_BREACHING };
    this.serviceAlarms.push(
      this.alarm({
        id: 'table-throttles',
        section: 'table-throttles',
        summary:
          'DynamoDB throttled requests to the table (any operation, index throttles included) in 2 of the last 3 five-minute periods.',
        metric: summed(perOperation('ThrottledRequests'), 'Throttled requests (all operations)'),
        ...sustained,
      }),
      ...indexNames.map((indexName) =>
        this.alarm({
          id: `table-throttles-${indexName}`,
          section: 'index-throttles',
          summary: `DynamoDB throttled reads or writes of the index ${indexName} in 2 of the last 3 five-minute periods.`,
          metric: summed(
            Object.fromEntries(
              (['ReadThrottleEvents', 'WriteThrottleEvents'] as const).map((metricName) => [
                metricName === 'ReadThrottleEvents' ? 'reads' : 'writes',
                table.metric(metricName, {
                  dimensionsMap: { TableName: table.tableName, GlobalSecondaryIndexName: indexName },
                  statistic: 'Sum',
                  period: FIVE_MINUTES,
                }),
              ]),
            ),
            `${indexName} throttle events`,
          ),
          ...sustained,
        }),
      ),
      this.alarm({
        id: 'table-system-errors',
        section: 'table-system-errors',
        // SystemErrors has no index dimension: an index's errors count under the table's operation.
        summary: 'DynamoDB answered system errors (HTTP 500) to the table (any operation) in 2 of the last 3 five-minute periods.',
        metric: summed(perOperation('SystemErrors'), 'System errors (all operations)'),
        ...sustained,
      }),
      this.alarm({
        id: 'table-transaction-conflicts',
        section: 'transaction-conflicts',
        summary: `DynamoDB rejected at least 10 requests for a transaction conflict per 100 write transactions, in 3 consecutive 5-minute periods (periods under ${MIN_RATE_REQUESTS} transactions are not rated).`,
        // DynamoDB's own count (not the EMF TransactionConflicts, which only counts what the code
        // caught): it also counts single-item writes rejected by a transaction in flight.
        metric: new MathExpression({
          expression: filledRate('conflicts', 'transactions'),
          usingMetrics: {
            conflicts: table.metric('TransactionConflict', { statistic: 'Sum', period: FIVE_MINUTES }),
            transactions: table.metric('SuccessfulRequestLatency', {
              dimensionsMap: { TableName: table.tableName, Operation: 'TransactWriteItems' },
              statistic: 'SampleCount',
              period: FIVE_MINUTES,
            }),
          },
          label: 'Transaction conflicts per 100 write transactions',
          period: FIVE_MINUTES,
        }),
        // Races conflict now and then and the code retries: only lasting contention pages.
        threshold: 10,
        evaluationPeriods: 3,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
  }

  /** A dead-letter queue: any message in it, and a message older than half the stream's 24-hour retention. */
  watchQueue(id: string, queue: IQueue, description: string): void {
    this.queues.push({ id, queue });
    // SQS stops publishing a queue's metrics when it is idle for 6 hours, even with messages in it.
    // IGNORE keeps the last state through such gaps: a dead letter nobody touched does not turn
    // into a false OK (a queue that never had a message stays in INSUFFICIENT_DATA, which notifies nobody).
    const keepState = TreatMissingData.IGNORE;
    this.serviceAlarms.push(
      this.alarm({
        id: `${id}-depth`,
        section: 'dead-letters',
        summary: `${description}: the dead-letter queue ${id} holds a message.`,
        metric: queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: FIVE_MINUTES }),
        threshold: 1,
        evaluationPeriods: 1,
        treatMissingData: keepState,
      }),
      this.alarm({
        id: `${id}-age`,
        section: 'dead-letter-age',
        summary: `${description}: a message has waited 12 hours in the dead-letter queue ${id}.`,
        metric: queue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', period: FIVE_MINUTES }),
        threshold: Duration.hours(12).toSeconds(),
        evaluationPeriods: 1,
        treatMissingData: keepState,
      }),
    );
  }

  /**
   * A queue whose consumers fall behind: its oldest message waited an hour. SQS leaves messages
   * received 3 times or more out of this metric, so messages waiting for their long retries (the
   * webhook schedule's 2 hours and more come after the third attempt) do not raise it.
   */
  watchBacklog(id: string, queue: IQueue, description: string): void {
    this.serviceAlarms.push(
      this.alarm({
        id: `${id}-backlog`,
        section: 'webhook-backlog',
        summary: `${description}: a message has waited an hour in ${id} for one of its first three attempts.`,
        metric: queue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', period: FIVE_MINUTES }),
        threshold: Duration.hours(1).toSeconds(),
        evaluationPeriods: 3,
        datapointsToAlarm: 3,
        // An idle queue publishes nothing: nothing waits.
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
  }

  /** The iterator age of a function fed by the table's stream. */
  watchStream(fn: IFunction, name: string): void {
    this.streams.push({ name, fn });
    this.serviceAlarms.push(
      this.alarm({
        id: `${name}-iterator-age`,
        section: 'stream-iterator-age',
        summary: `The ${name} function is 5 minutes or more behind the table's stream.`,
        metric: fn.metric('IteratorAge', { statistic: 'Maximum', period: FIVE_MINUTES }),
        // A DynamoDB outage of a minute or two delays records by about that (issue 11, item 9):
        // 5 minutes means a record is stuck (a failing batch retried) or the function cannot keep up.
        threshold: Duration.minutes(5).toMilliseconds(),
        evaluationPeriods: 1,
        // Lambda reports it per invocation: none means no record waiting on a retry.
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
  }

  /**
   * SES's account reputation (the metrics SES itself reviews accounts on), and the mail section of
   * the dashboard; the bounce, complaint and suppression counts only when a configuration set
   * reports them (`configurationSetName`).
   */
  watchMail(configurationSetName: string | undefined): void {
    this.mail = { configurationSet: configurationSetName !== undefined };
    // Account-level: they apply whenever this account sends through SES, with or without a
    // configuration set. SES publishes them irregularly: IGNORE keeps the last state through gaps,
    // so a bad rate does not read as OK for want of a new datapoint (an account that never sent
    // stays in INSUFFICIENT_DATA, which notifies nobody).
    const reputation = (metricName: string): Metric =>
      new Metric({ namespace: 'AWS/SES', metricName, statistic: 'Maximum', period: Duration.minutes(15) });
    this.serviceAlarms.push(
      this.alarm({
        id: 'ses-bounce-rate',
        section: 'ses-bounce-rate',
        summary: "The account's SES bounce rate reached 5%.",
        metric: reputation('Reputation.BounceRate'),
        // SES reports rates as fractions; 5% puts the account under review (10% may pause sending).
        threshold: 0.05,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.IGNORE,
      }),
      this.alarm({
        id: 'ses-complaint-rate',
        section: 'ses-complaint-rate',
        summary: "The account's SES complaint rate reached 0.1%.",
        metric: reputation('Reputation.ComplaintRate'),
        // 0.1% puts the account under review (0.5% may pause sending).
        threshold: 0.001,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.IGNORE,
      }),
    );
  }

  /** Lambda across the account and region: throttles, and concurrency against the quota. */
  private watchAccount(): void {
    this.serviceAlarms.push(
      this.alarm({
        id: 'lambda-concurrency',
        section: 'lambda-concurrency',
        summary: 'Lambda concurrency claimed in this account and region reached 80% of the quota in 3 of the last 5 minutes.',
        // ClaimedAccountConcurrency is what Lambda compares with the quota (running unreserved
        // invocations plus every reservation); SERVICE_QUOTA reads the applied quota, so the alarm
        // follows a raised quota. On a fresh account (quota 10) it pages from 8 concurrent
        // invocations: such an account cannot serve production traffic (npm run preflight says so).
        metric: new MathExpression({
          expression: '100 * FILL(claimed, 0) / SERVICE_QUOTA(concurrent)',
          usingMetrics: {
            claimed: LambdaFunction.metricAll('ClaimedAccountConcurrency', { statistic: 'Maximum', period: ONE_MINUTE }),
            concurrent: LambdaFunction.metricAllConcurrentExecutions({ statistic: 'Maximum', period: ONE_MINUTE }),
          },
          label: 'Claimed concurrency (% of quota)',
          period: ONE_MINUTE,
        }),
        threshold: 80,
        evaluationPeriods: 5,
        datapointsToAlarm: 3,
        // Lambda reports nothing while nothing runs: nowhere near the quota.
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      this.alarm({
        id: 'lambda-throttles',
        section: 'lambda-throttles',
        summary: 'Lambda throttled invocations in this account and region (any function) in 2 of the last 3 five-minute periods.',
        metric: LambdaFunction.metricAllThrottles({ statistic: 'Sum', period: FIVE_MINUTES }),
        // Other workloads share the pool: page when throttling lasts, each Roster function has its own alarm.
        threshold: 1,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
  }

  /**
   * An alarm in `scope` that notifies the topic. Its name starts with this stack's name and, in a
   * nested stack, that stack's id as well (`Roster-Auth-auth-signin-5xx`): an alarm that moves to
   * another stack must change its name, since CloudFormation creates the new one before it deletes the old.
   */
  private alarm(spec: AlarmSpec, scope: Construct = this): Alarm {
    const stack = Stack.of(this);
    const nested = Stack.of(scope);
    const prefix = nested === stack ? stack.stackName : `${stack.stackName}-${nested.node.id}`;
    const alarm = new Alarm(scope, spec.id, {
      alarmName: `${prefix}-${spec.id}`,
      alarmDescription: `${spec.summary} ${RUNBOOK_SECTIONS[spec.section]} Runbook: ${RUNBOOK}#${spec.section}`,
      metric: spec.metric,
      threshold: spec.threshold,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: spec.evaluationPeriods,
      datapointsToAlarm: spec.datapointsToAlarm ?? spec.evaluationPeriods,
      treatMissingData: spec.treatMissingData,
    });
    alarm.addAlarmAction(this.action);
    alarm.addOkAction(this.action);
    return alarm;
  }

  /** The dashboard: one row per section, only for what was watched. */
  private dashboardBody(): string {
    const rows: Row[] = [
      new Row(
        new TextWidget({
          width: 24,
          height: 2,
          markdown:
            `# ${Stack.of(this).stackName}\n` +
            `Golden signals per route group, then the table, background work and domain events. Every alarm names its section of ${RUNBOOK}. ` +
            'Built by infra/monitoring.ts: console edits are lost on the next deploy.',
        }),
      ),
    ];
    if (this.serviceAlarms.length)
      rows.push(new Row(new AlarmStatusWidget({ title: 'Service alarms', alarms: this.serviceAlarms, width: 24, height: 3 })));
    rows.push(new Row(...this.overviewWidgets()));
    const groups = new Map<string, WatchedFunction[]>();
    for (const watched of this.functions.filter((f) => f.kind === 'api')) {
      const group = routeGroup(watched.name);
      groups.set(group, [...(groups.get(group) ?? []), watched]);
    }
    const rank = (group: string): number => (GROUP_ORDER.includes(group) ? GROUP_ORDER.indexOf(group) : GROUP_ORDER.length);
    for (const [group, fns] of [...groups].sort(([a], [b]) => rank(a) - rank(b))) rows.push(new Row(...groupWidgets(group, fns)));
    if (this.table) rows.push(new Row(...tableWidgets(this.table.table, this.table.indexNames)));
    const background = this.functions.filter((f) => f.kind !== 'api');
    if (background.length || this.streams.length || this.queues.length) rows.push(new Row(...this.backgroundWidgets(background)));
    rows.push(new Row(...this.eventWidgets()));
    const column = new Column(...rows);
    column.position(0, 0);
    return Stack.of(this).toJsonString({ periodOverride: 'auto', widgets: column.toJson() });
  }

  /** The whole API and the account's Lambda capacity. */
  private overviewWidgets(): IWidget[] {
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
    const api = this.api;
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
        [rateLimitedShare(ONE_MINUTE)],
      ),
      graph('API latency (ms)', [
        api.metricLatency({ statistic: 'p50', period: ONE_MINUTE, label: 'p50' }),
        api.metricLatency({ statistic: 'p99', period: ONE_MINUTE, label: 'p99' }),
        api.metricIntegrationLatency({ statistic: 'p99', period: ONE_MINUTE, label: 'integration p99' }),
      ]),
      ...lambda,
    ];
  }

  /** Stream and scheduled functions, their streams and dead-letter queues. */
  private backgroundWidgets(background: readonly WatchedFunction[]): IWidget[] {
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
        'Stream iterator age (ms)',
        this.streams.map(({ name, fn }) => fn.metric('IteratorAge', { statistic: 'Maximum', period: ONE_MINUTE, label: name })),
      ),
      graph(
        'Dead-letter queues',
        this.queues.map(({ id, queue }) =>
          queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period, label: `${id} messages` }),
        ),
        this.queues.map(({ id, queue }) =>
          queue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', period, label: `${id} oldest (s, right)` }),
        ),
      ),
    ];
  }

  /** The domain events (EVENT_METRICS), and mail when watched. */
  private eventWidgets(): IWidget[] {
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
    if (this.mail) {
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
          this.mail.configurationSet
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
    widgets.push(
      graph('Transaction conflicts / 5 min', [count(EVENT_METRICS.transactionConflicts, 'cancelled by a conflict (caught by the code)')]),
    );
    return widgets;
  }
}

/** The p99 duration alarm's threshold in milliseconds. */
const durationThresholdMs = ({ timeout, budget }: Pick<WatchedFunction, 'timeout' | 'budget'>): number => {
  const timeoutMs = timeout.toMilliseconds();
  const share = DURATION_SHARE * timeoutMs;
  return budget ? Math.max(share, (budget.toMilliseconds() + timeoutMs) / 2) : share;
};

/**
 * The share (0 to 1) of API requests answered 429 rate_limited: one Metrics Insights query over
 * every function's RateLimited (an alarm's metric math may read only 10 metrics, and there are more
 * API functions). Each request emits RateLimited once, 1 or 0, so its average is the share.
 */
const rateLimitedShare = (period: Duration): MathExpression =>
  new MathExpression({
    expression: `SELECT AVG(${REQUEST_METRICS.rateLimited}) FROM SCHEMA("${METRIC_NAMESPACE}", ${FUNCTION_DIMENSION})`,
    usingMetrics: {},
    label: '429 share (0-1, right)',
    period,
  });

const graph = (title: string, left: IMetric[], right: IMetric[] = []): GraphWidget =>
  new GraphWidget({ title, left, right, width: 6, height: 6, ...(right.length ? { rightYAxis: { min: 0 } } : {}), leftYAxis: { min: 0 } });

/** Rate, errors, latency and saturation of one route group's functions, from the EMF request metrics. */
const groupWidgets = (group: string, fns: readonly WatchedFunction[]): IWidget[] => {
  const per = (metricName: string, statistic: string, suffix = ''): Metric[] =>
    fns.map(({ name }) => emf(metricName, name, { statistic, period: ONE_MINUTE, label: `${name}${suffix}` }));
  return [
    graph(`${group}: requests / min`, per(REQUEST_METRICS.requests, 'Sum')),
    graph(`${group}: 5xx and 429 answers / min`, [
      ...per(REQUEST_METRICS.serverErrors, 'Sum', ' 5xx'),
      ...per(REQUEST_METRICS.rateLimited, 'Sum', ' 429'),
    ]),
    graph(`${group}: latency p50 / p99 (ms)`, [
      ...per(REQUEST_METRICS.duration, 'p50', ' p50'),
      ...per(REQUEST_METRICS.duration, 'p99', ' p99'),
    ]),
    graph(
      `${group}: Lambda throttles / concurrency`,
      fns.map(({ name, fn }) => fn.metricThrottles({ statistic: 'Sum', period: ONE_MINUTE, label: `${name} throttles` })),
      fns.map(({ name, fn }) =>
        fn.metric('ConcurrentExecutions', { statistic: 'Maximum', period: ONE_MINUTE, label: `${name} concurrency (right)` }),
      ),
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
