/**
 * What a deployment of Roster costs a month at zero traffic, read from its synthesized templates
 * (both stacks, the nested stacks included): the alarms by the metrics each reads, the dashboard,
 * the keys, the secrets, the scheduled runs and Lambda's polling of SQS. `node scripts/fixed-cost.ts`
 * (scripts/fixed-cost.ts) writes it into docs/scale.md; test/infra/fixed-cost.test.ts fails when the
 * doc is not what this module makes of the current templates.
 */
import { EVENT_METRICS, PUBLISHED_REQUEST_METRICS, UNPUBLISHED_EVENTS, routeGroup } from '#lib/core/metric-names.ts';
import { FALLBACK, ROUTES } from '#lib/http/routes.ts';

/**
 * us-east-1 list prices (USD), as of 2026, without free tiers (an account's free tier is shared by
 * everything in it). Sources:
 * - CloudWatch (https://aws.amazon.com/cloudwatch/pricing/): a standard-resolution alarm $0.10 a
 *   month per metric it lists (up to 10 by metric math), high resolution $0.30, a composite alarm
 *   $0.50; a custom metric $0.30 a month, metered by the hour it receives data; a dashboard $3 a
 *   month past the first three; Logs ingestion $0.50 a GB.
 * - KMS (https://aws.amazon.com/kms/pricing/): $1 a month per customer managed key.
 * - Secrets Manager (https://aws.amazon.com/secrets-manager/pricing/): $0.40 a month per secret.
 * - SQS (https://aws.amazon.com/sqs/pricing/): $0.40 a million standard-queue requests.
 * - Lambda (https://aws.amazon.com/lambda/pricing/): $0.20 a million requests, $0.0000133334 a
 *   GB-second on arm64.
 * - DynamoDB on demand (https://aws.amazon.com/dynamodb/pricing/on-demand/): $0.125 a million read
 *   request units; Lambda's GetRecords calls on a table's stream are free.
 * - EventBridge (https://aws.amazon.com/eventbridge/pricing/): scheduled rules on the default bus publish no charged events.
 * - AWS Budgets (https://aws.amazon.com/aws-cost-management/aws-budgets/pricing/): an account's first two budgets are free.
 */
export const PRICES = {
  alarmMetric: 0.1,
  highResolutionAlarmMetric: 0.3,
  compositeAlarm: 0.5,
  customMetric: 0.3,
  dashboard: 3,
  kmsKey: 1,
  secret: 0.4,
  sqsPerMillionRequests: 0.4,
  lambdaPerMillionRequests: 0.2,
  lambdaArm64PerGbSecond: 0.0000133334,
  lambdaX86PerGbSecond: 0.0000166667,
  dynamoDbPerMillionReadUnits: 0.125,
  logsPerGbIngested: 0.5,
} as const;

/** A month as AWS prices it: 730 hours. */
export const MONTH_MINUTES = 730 * 60;

/**
 * What is assumed where AWS documents no figure:
 * - An idle scheduled run (a sweep that finds nothing) is billed this long, reads this many units
 *   (a Query or two, eventually consistent) and logs this much (Lambda's START, END and REPORT lines
 *   and the run's summary line).
 * - Lambda's SQS pollers long-poll for 20 s (the most SQS allows), so each makes 3 receives a
 *   minute on an empty queue. How many pollers is documented (Configuring scaling behavior for SQS
 *   event source mappings, https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html):
 *   at low traffic 5, and as few as 2, "not available when you enable the maximum concurrency setting".
 */
export const ASSUMPTIONS = {
  idleRunMs: 50,
  idleRunReadUnits: 1,
  idleRunLogBytes: 1024,
  receivesPerPollerMinute: 3,
  pollersWithMaximumConcurrency: 5,
  pollersWithout: 2,
} as const;

interface Resource {
  Type: string;
  Properties?: Record<string, unknown>;
}
export interface TemplateJson {
  Resources?: Record<string, Resource>;
  Outputs?: Record<string, { Value: unknown; Export?: { Name: unknown } }>;
}

export interface CostItem {
  /** What is paid for, in words. */
  readonly item: string;
  readonly count: number;
  /** How it is priced: the unit price and what is counted. */
  readonly basis: string;
  readonly monthly: number;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The metrics an alarm lists: one for a metric alarm, the MetricStat queries of a metric math alarm. */
const alarmMetrics = (properties: Record<string, unknown>): { count: number; highResolution: boolean } => {
  const queries = properties.Metrics;
  if (!Array.isArray(queries)) return { count: 1, highResolution: Number(properties.Period ?? 60) < 60 };
  const stats = queries.filter((q): q is { MetricStat: { Period: number } } => isObject(q) && isObject(q.MetricStat));
  if (queries.some((q) => isObject(q) && typeof q.Expression === 'string' && /^\s*SELECT/i.test(q.Expression)))
    throw new Error(
      `${String(properties.AlarmName)}: a Metrics Insights alarm is priced per metric it analyzes, which the template does not say`,
    );
  return { count: stats.length, highResolution: stats.some((q) => q.MetricStat.Period < 60) };
};

/** Every resource of every template, each with the template it is in. */
const resourcesOf = (templates: readonly TemplateJson[]): { resource: Resource; template: TemplateJson }[] =>
  templates.flatMap((template) => Object.values(template.Resources ?? {}).map((resource) => ({ resource, template })));

/** The resource type an ARN value points at: a GetAtt in its template, or an import of another template's export. */
const typeOf = (value: unknown, template: TemplateJson, templates: readonly TemplateJson[]): string | undefined => {
  if (!isObject(value)) return undefined;
  if (Array.isArray(value['Fn::GetAtt'])) return template.Resources?.[String(value['Fn::GetAtt'][0])]?.Type;
  if ('Fn::ImportValue' in value) {
    const name = JSON.stringify(value['Fn::ImportValue']);
    for (const other of templates)
      for (const output of Object.values(other.Outputs ?? {}))
        if (JSON.stringify(output.Export?.Name) === name) return typeOf(output.Value, other, templates);
  }
  return undefined;
};

/** A schedule expression's runs a month: `rate(N minute[s]|hour[s]|day[s])`; a cron's are not priced. */
const runsPerMonth = (expression: string): number => {
  const rate = /^rate\((\d+) (minute|hour|day)s?\)$/.exec(expression);
  if (!rate) throw new Error(`${expression}: only rate() schedules are priced`);
  const minutes = Number(rate[1]) * { minute: 1, hour: 60, day: 1440 }[rate[2] as 'minute' | 'hour' | 'day'];
  return MONTH_MINUTES / minutes;
};

const round = (value: number): number => Math.round(value * 100) / 100;

/** `$0.10`: a price as the pricing pages write it. */
export const usd = (value: number): string => `$${value.toFixed(2)}`;

/** The fixed monthly cost of the templates at zero traffic, item by item. */
export const fixedCost = (templates: readonly TemplateJson[]): CostItem[] => {
  const all = resourcesOf(templates);
  const ofType = (type: string) => all.filter(({ resource }) => resource.Type === type);
  const items: CostItem[] = [];

  let alarms = 0;
  let metrics = 0;
  let highResolution = 0;
  for (const { resource } of ofType('AWS::CloudWatch::Alarm')) {
    const read = alarmMetrics(resource.Properties ?? {});
    alarms += 1;
    if (read.highResolution) highResolution += read.count;
    else metrics += read.count;
  }
  items.push({
    item: `Metric alarms (${alarms})`,
    count: metrics + highResolution,
    basis: `${usd(PRICES.alarmMetric)} per metric read${highResolution ? `, ${usd(PRICES.highResolutionAlarmMetric)} at high resolution` : ''}`,
    monthly: metrics * PRICES.alarmMetric + highResolution * PRICES.highResolutionAlarmMetric,
  });
  const composites = ofType('AWS::CloudWatch::CompositeAlarm').length;
  items.push({
    item: 'Composite alarms',
    count: composites,
    basis: `${usd(PRICES.compositeAlarm)} each`,
    monthly: composites * PRICES.compositeAlarm,
  });
  const dashboards = ofType('AWS::CloudWatch::Dashboard').length;
  items.push({ item: 'Dashboards', count: dashboards, basis: `${usd(PRICES.dashboard)} each`, monthly: dashboards * PRICES.dashboard });
  const keys = ofType('AWS::KMS::Key').length;
  items.push({ item: 'KMS keys', count: keys, basis: `${usd(PRICES.kmsKey)} each`, monthly: keys * PRICES.kmsKey });
  const secrets = ofType('AWS::SecretsManager::Secret').length;
  items.push({ item: 'Secrets Manager secrets', count: secrets, basis: `${usd(PRICES.secret)} each`, monthly: secrets * PRICES.secret });
  const budgets = ofType('AWS::Budgets::Budget').length;
  if (budgets) items.push({ item: 'AWS Budgets budgets', count: budgets, basis: "an account's first two are free", monthly: 0 });

  // Scheduled runs: the rule is free, each run is a Lambda invocation that reads and logs a little.
  let runs = 0;
  let runCost = 0;
  for (const { resource, template } of ofType('AWS::Events::Rule')) {
    const expression = resource.Properties?.ScheduleExpression;
    if (typeof expression !== 'string') continue;
    for (const target of (resource.Properties?.Targets ?? []) as { Arn: unknown }[]) {
      const arn = target.Arn;
      const fnId = isObject(arn) && Array.isArray(arn['Fn::GetAtt']) ? String(arn['Fn::GetAtt'][0]) : undefined;
      const fn = fnId ? template.Resources?.[fnId] : undefined;
      if (fn?.Type !== 'AWS::Lambda::Function') throw new Error(`${expression}: a schedule's target is not a function of its stack`);
      const memoryGb = Number(fn.Properties?.MemorySize ?? 128) / 1024;
      const arm64 = JSON.stringify(fn.Properties?.Architectures ?? []).includes('arm64');
      const n = runsPerMonth(expression);
      runs += n;
      runCost +=
        (n / 1e6) * PRICES.lambdaPerMillionRequests +
        n * memoryGb * (ASSUMPTIONS.idleRunMs / 1000) * (arm64 ? PRICES.lambdaArm64PerGbSecond : PRICES.lambdaX86PerGbSecond) +
        ((n * ASSUMPTIONS.idleRunReadUnits) / 1e6) * PRICES.dynamoDbPerMillionReadUnits +
        ((n * ASSUMPTIONS.idleRunLogBytes) / 1024 ** 3) * PRICES.logsPerGbIngested;
    }
  }
  items.push({
    item: `Scheduled runs (${Math.round(runs).toLocaleString('en-US')} a month)`,
    count: ofType('AWS::Events::Rule').filter(({ resource }) => resource.Properties?.ScheduleExpression).length,
    basis: `each run: a Lambda request, ${ASSUMPTIONS.idleRunMs} ms, ${ASSUMPTIONS.idleRunReadUnits} read unit, ${ASSUMPTIONS.idleRunLogBytes / 1024} KB of logs (assumed)`,
    monthly: runCost,
  });

  // Lambda polls each mapped SQS queue all the time; a stream's polling is free.
  let requests = 0;
  let mappings = 0;
  for (const { resource, template } of ofType('AWS::Lambda::EventSourceMapping')) {
    if (typeOf(resource.Properties?.EventSourceArn, template, templates) !== 'AWS::SQS::Queue') continue;
    const limited = isObject(resource.Properties?.ScalingConfig) && resource.Properties.ScalingConfig.MaximumConcurrency !== undefined;
    const pollers = limited ? ASSUMPTIONS.pollersWithMaximumConcurrency : ASSUMPTIONS.pollersWithout;
    requests += pollers * ASSUMPTIONS.receivesPerPollerMinute * MONTH_MINUTES;
    mappings += 1;
  }
  items.push({
    item: `SQS receives by Lambda's pollers (${(requests / 1e6).toFixed(2)} million a month)`,
    count: mappings,
    basis: `${usd(PRICES.sqsPerMillionRequests)} a million; ${ASSUMPTIONS.pollersWithMaximumConcurrency} pollers a mapping with MaximumConcurrency, else ${ASSUMPTIONS.pollersWithout}, ${ASSUMPTIONS.receivesPerPollerMinute} receives a minute each (assumed)`,
    monthly: (requests / 1e6) * PRICES.sqsPerMillionRequests,
  });
  return items.map((entry) => ({ ...entry, monthly: round(entry.monthly) }));
};

export const total = (items: readonly CostItem[]): number => round(items.reduce((sum, entry) => sum + entry.monthly, 0));

/** Alarms and composite alarms with actions: what can notify. */
export const notifyingAlarms = (templates: readonly TemplateJson[]): number =>
  resourcesOf(templates).filter(
    ({ resource }) =>
      (resource.Type === 'AWS::CloudWatch::Alarm' || resource.Type === 'AWS::CloudWatch::CompositeAlarm') &&
      Array.isArray(resource.Properties?.AlarmActions) &&
      resource.Properties.AlarmActions.length > 0,
  ).length;

/**
 * The custom metric series Roster can publish (lib/core/metric-names.ts): per route group or once
 * for the API, and each published domain event. None at zero traffic; each costs $0.30 a month when
 * it receives data in every hour.
 */
export const customSeries = (): number => {
  const groups = new Set([...ROUTES.map((route) => route.name), FALLBACK].map(routeGroup)).size;
  const requestSeries = Object.values(PUBLISHED_REQUEST_METRICS).reduce((sum, dims) => sum + (dims.length === 0 ? 1 : groups), 0);
  return requestSeries + Object.values(EVENT_METRICS).filter((name) => !UNPUBLISHED_EVENTS.has(name)).length;
};
