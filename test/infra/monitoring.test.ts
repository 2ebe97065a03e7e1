import { App, Duration, NestedStack, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { AttributeType, BillingMode, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { Monitoring, type MonitoringProps } from '#infra/monitoring/monitoring.ts';
import { DURATION_SHARE, TABLE_OPERATIONS, type WatchedFunction, routeGroup } from '#infra/monitoring/metrics.ts';
import { RUNBOOK, RUNBOOK_SECTIONS } from '#infra/monitoring/runbook.ts';
import { FUNCTION_DIMENSION, METRIC_NAMESPACE, REQUEST_METRICS } from '#lib/core/metric-names.ts';

/**
 * The monitoring construct on a small stack of its own: a table with two indexes, plain inline
 * functions (no bundling), an HTTP API and a dead-letter queue.
 */
interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
}
interface MetricQuery {
  Id: string;
  Expression?: string;
  MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions?: { Name: string; Value: unknown }[] }; Stat: string };
}
interface AlarmProps {
  AlarmName: string;
  AlarmDescription: string;
  AlarmActions: unknown[];
  OKActions: unknown[];
  Namespace?: string;
  MetricName?: string;
  Dimensions?: { Name: string; Value: unknown }[];
  ExtendedStatistic?: string;
  Metrics?: MetricQuery[];
  Threshold: number;
  EvaluationPeriods: number;
  DatapointsToAlarm: number;
  TreatMissingData: string;
}

const API = ['teams-create', 'teams-list', 'auth-signin', 'jwks', 'my-invites-list'];
const INDEXES = ['gsi1', 'gsi2'];

const build = (props: MonitoringProps, mail: { configurationSet: string | undefined }) => {
  const app = new App();
  const stack = new Stack(app, 'Test');
  const table = new Table(stack, 'Table', {
    partitionKey: { name: 'pk', type: AttributeType.STRING },
    sortKey: { name: 'sk', type: AttributeType.STRING },
    billingMode: BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
  });
  for (const indexName of INDEXES) {
    table.addGlobalSecondaryIndex({ indexName, partitionKey: { name: `${indexName}pk`, type: AttributeType.STRING } });
  }
  const fn = (id: string, timeout: Duration): LambdaFunction =>
    new LambdaFunction(stack, id, {
      runtime: Runtime.NODEJS_24_X,
      handler: 'index.handler',
      code: Code.fromInline('exports.handler = async () => ({});'),
      timeout,
    });
  const api = new HttpApi(stack, 'Api');
  const queue = new Queue(stack, 'MailDeadLetters', { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true });

  const monitoring = new Monitoring(stack, 'Monitoring', props);
  const watched: WatchedFunction[] = [
    ...API.map((name) => ({ name, fn: fn(name, Duration.seconds(10)), timeout: Duration.seconds(10), kind: 'api' as const })),
    { name: 'mailer', fn: fn('mailer', Duration.seconds(10)), timeout: Duration.seconds(10), kind: 'stream' },
    {
      name: 'invite-sweep',
      fn: fn('invite-sweep', Duration.seconds(60)),
      timeout: Duration.seconds(60),
      budget: Duration.seconds(50),
      kind: 'schedule',
    },
    { name: 'keys-rotate', fn: fn('keys-rotate', Duration.seconds(30)), timeout: Duration.seconds(30), kind: 'rotation' },
    { name: 'mail-events', fn: fn('mail-events', Duration.seconds(30)), timeout: Duration.seconds(30), kind: 'sns' },
  ];
  const rollback = new Map(watched.map((w) => [w.name, monitoring.watchFunction(w)]));
  monitoring.watchApi(api);
  monitoring.watchTable(table, INDEXES);
  monitoring.watchQueue('mail-dead-letters', queue, 'An e-mail could not be delivered after every retry');
  monitoring.watchBacklog(
    'webhooks',
    new Queue(stack, 'Webhooks', { encryption: QueueEncryption.SQS_MANAGED }),
    'Webhook deliveries are behind',
  );
  const mailer = watched.find((w) => w.name === 'mailer');
  if (mailer) monitoring.watchStream(mailer.fn, 'mailer');
  monitoring.watchMail(mail.configurationSet);

  const json = Template.fromStack(stack).toJSON() as { Resources: Record<string, Resource> };
  const ofType = (type: string): [string, Resource][] => Object.entries(json.Resources).filter(([, r]) => r.Type === type);
  const alarms = ofType('AWS::CloudWatch::Alarm').map(([, r]) => r.Properties as unknown as AlarmProps);
  const alarm = (id: string): AlarmProps => {
    const found = alarms.find((a) => a.AlarmName === `Test-${id}`);
    if (!found) throw new Error(`no alarm ${id}`);
    return found;
  };
  const logicalId = (name: string): string => stack.getLogicalId(watched.find((w) => w.name === name)?.fn.node.defaultChild as never);
  return { app, stack, monitoring, json, ofType, alarms, alarm, rollback, logicalId };
};

const withEmail = build({ alarmEmail: 'ops@example.com' }, { configurationSet: 'roster-mail' });
const without = build({}, { configurationSet: undefined });
const [topicId] = withEmail.ofType('AWS::SNS::Topic')[0] ?? [];

/** Every `Ref` of a metric's dimensions, as the logical ids it names. */
const refs = (dimensions: { Value: unknown }[] | undefined): string[] =>
  (dimensions ?? []).flatMap((d) =>
    typeof d.Value === 'object' && d.Value && 'Ref' in d.Value ? [String((d.Value as { Ref: unknown }).Ref)] : [],
  );

/** The dashboard body with each CloudFormation token replaced by a placeholder, parsed. */
const dashboardOf = (json: { Resources: Record<string, Resource> }) => {
  const [dashboard] = Object.values(json.Resources).filter((r) => r.Type === 'AWS::CloudWatch::Dashboard');
  const body = dashboard?.Properties.DashboardBody as string | { 'Fn::Join': [string, unknown[]] };
  const text = typeof body === 'string' ? body : body['Fn::Join'][1].map((part) => (typeof part === 'string' ? part : 'TOKEN')).join('');
  return {
    text,
    parsed: JSON.parse(text) as {
      widgets: { type: string; width: number; properties: { title?: string; metrics?: unknown[]; markdown?: string } }[];
    },
  };
};

describe('the alarm topic', () => {
  it("is every alarm's action, on ALARM and on OK", () => {
    for (const { alarms } of [withEmail, without]) {
      expect(alarms.length).toBeGreaterThan(30);
      for (const a of alarms) {
        expect(a.AlarmActions, a.AlarmName).toEqual([{ Ref: topicId }]);
        expect(a.OKActions, a.AlarmName).toEqual([{ Ref: topicId }]);
      }
    }
  });

  it("is encrypted with a rotated key only this account's alarms may use, allows only SSL, and lets only those alarms publish", () => {
    const [, topic] = withEmail.ofType('AWS::SNS::Topic')[0] ?? [];
    expect(topic?.Properties.KmsMasterKeyId).toBeDefined();
    const [, key] = withEmail.ofType('AWS::KMS::Key')[0] ?? [];
    expect(key?.Properties.EnableKeyRotation).toBe(true);
    // CloudWatch may use the key only for this account's alarms (no confused deputy).
    const keyStatements = (key?.Properties.KeyPolicy as { Statement: { Principal: unknown; Condition?: Record<string, unknown> }[] })
      .Statement;
    const forAlarms = keyStatements.find((s) => JSON.stringify(s.Principal).includes('cloudwatch.amazonaws.com'));
    expect(Object.keys(forAlarms?.Condition ?? {}).sort()).toEqual(['ArnLike', 'StringEquals']);
    expect(JSON.stringify(forAlarms?.Condition)).toContain('AWS::AccountId');
    const [, policy] = withEmail.ofType('AWS::SNS::TopicPolicy')[0] ?? [];
    const statements = (
      policy?.Properties.PolicyDocument as {
        Statement: { Effect: string; Principal: unknown; Condition: Record<string, Record<string, unknown>> }[];
      }
    ).Statement;
    expect(statements.some((s) => s.Effect === 'Deny' && JSON.stringify(s.Condition).includes('aws:SecureTransport'))).toBe(true);
    const publish = statements.find((s) => JSON.stringify(s.Principal).includes('cloudwatch.amazonaws.com'));
    expect(Object.keys(publish?.Condition ?? {}).sort()).toEqual(['ArnLike', 'StringEquals']);
    expect(JSON.stringify(publish?.Condition.StringEquals)).toContain('AWS::AccountId');
  });

  it('gets an e-mail subscription only with alarmEmail', () => {
    const subscriptions = withEmail.ofType('AWS::SNS::Subscription').map(([, s]) => s.Properties);
    expect(subscriptions).toEqual([{ Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: { Ref: topicId } }]);
    expect(without.ofType('AWS::SNS::Subscription')).toEqual([]);
  });
});

describe('every alarm', () => {
  const { alarms } = withEmail;

  it('has a stable unique name and a description ending with its runbook section', () => {
    expect(new Set(alarms.map((a) => a.AlarmName)).size).toBe(alarms.length);
    for (const a of alarms) {
      const match = new RegExp(`Runbook: ${RUNBOOK}#([a-z0-9-]+)$`).exec(a.AlarmDescription);
      expect(match?.[1], a.AlarmName).toBeDefined();
      const section = match?.[1] as keyof typeof RUNBOOK_SECTIONS;
      expect(Object.keys(RUNBOOK_SECTIONS), a.AlarmName).toContain(section);
      expect(a.AlarmDescription).toContain(RUNBOOK_SECTIONS[section]);
      expect(a.AlarmDescription.length).toBeLessThanOrEqual(1024);
    }
    // Each runbook section is used by some alarm, so the runbook has no section for nothing.
    const used = new Set(alarms.map((a) => /#([a-z0-9-]+)$/.exec(a.AlarmDescription)?.[1]));
    for (const section of Object.keys(RUNBOOK_SECTIONS)) expect(used, section).toContain(section);
  });

  it('wraps in FILL each metric its expressions add or divide (SERVICE_QUOTA reads the quota, not data)', () => {
    const expressions = alarms.flatMap((a) =>
      (a.Metrics ?? []).filter((m) => m.Expression && !m.Expression.startsWith('SELECT')).map((m) => ({ a, m })),
    );
    expect(expressions.length).toBeGreaterThan(API.length);
    for (const { a, m } of expressions) {
      const ids = (a.Metrics ?? []).filter((q) => q.MetricStat).map((q) => q.Id);
      let rest = m.Expression ?? '';
      for (const id of ids) rest = rest.replaceAll(`FILL(${id}, 0)`, '').replaceAll(`SERVICE_QUOTA(${id})`, '');
      for (const id of ids) expect(rest, `${a.AlarmName}: ${m.Expression}`).not.toMatch(new RegExp(`\\b${id}\\b`));
      expect(m.Expression, a.AlarmName).toContain('FILL(');
    }
    // The table's sums: one metric per operation, each filled.
    const throttles = withEmail.alarm('table-throttles');
    expect(
      throttles.Metrics?.filter((q) => q.MetricStat)
        .map((q) => q.MetricStat?.Metric.Dimensions?.find((d) => d.Name === 'Operation')?.Value)
        .sort(),
    ).toEqual([...TABLE_OPERATIONS].sort());
    expect(TABLE_OPERATIONS).toContain('TransactWriteItems');
    expect(TABLE_OPERATIONS).not.toContain('ConditionCheckItem');
  });

  it('reads at most 10 metrics', () => {
    for (const a of alarms) expect((a.Metrics ?? []).filter((q) => q.MetricStat).length, a.AlarmName).toBeLessThanOrEqual(10);
  });
});

describe('function alarms', () => {
  const { alarm, alarms, logicalId, rollback } = withEmail;

  it('watch an API function through its EMF ServerErrors (and crashes), never through Errors alone', () => {
    for (const name of API) {
      const a = alarm(`${name}-5xx`);
      const stats = (a.Metrics ?? []).flatMap((q) => (q.MetricStat ? [q.MetricStat.Metric] : []));
      expect(stats).toContainEqual({
        Namespace: METRIC_NAMESPACE,
        MetricName: REQUEST_METRICS.serverErrors,
        Dimensions: [{ Name: FUNCTION_DIMENSION, Value: name }],
      });
      expect(a.Metrics?.find((q) => q.Expression)?.Expression).toBe('FILL(answered, 0) + FILL(crashed, 0)');
      expect(a).toMatchObject({ Threshold: 1, EvaluationPeriods: 5, DatapointsToAlarm: 2 });
      const errorsOnly = alarms.filter((x) => x.MetricName === 'Errors' && refs(x.Dimensions).includes(logicalId(name)));
      expect(errorsOnly).toEqual([]);
    }
  });

  it('watch a background function through Lambda Errors', () => {
    for (const name of ['mailer', 'invite-sweep', 'keys-rotate', 'mail-events']) {
      const a = alarm(`${name}-errors`);
      expect(a).toMatchObject({ Namespace: 'AWS/Lambda', MetricName: 'Errors', Threshold: 1 });
      expect(refs(a.Dimensions)).toEqual([logicalId(name)]);
    }
    // Retried work pages when it keeps failing; lost work (a rotation, a bounce notice) at once.
    expect(alarm('mailer-errors')).toMatchObject({ EvaluationPeriods: 3, DatapointsToAlarm: 2 });
    expect(alarm('keys-rotate-errors')).toMatchObject({ EvaluationPeriods: 1, DatapointsToAlarm: 1 });
  });

  it('has no throttle alarm per function: the account-wide lambda-throttles alarm covers them all', () => {
    const names = alarms.map((a) => a.AlarmName);
    for (const name of [...API, 'mailer', 'invite-sweep', 'keys-rotate', 'mail-events'])
      expect(names).not.toContain(`Test-${name}-throttles`);
    expect(alarm('lambda-throttles')).toMatchObject({ Namespace: 'AWS/Lambda', MetricName: 'Throttles', Threshold: 1 });
  });

  it('alarm when p99 duration reaches 80% of the timeout, or halfway from a time budget to the timeout', () => {
    expect(DURATION_SHARE).toBe(0.8);
    for (const name of [...API, 'mailer'])
      expect(alarm(`${name}-duration`)).toMatchObject({ MetricName: 'Duration', ExtendedStatistic: 'p99', Threshold: 8000 });
    expect(alarm('keys-rotate-duration').Threshold).toBe(24_000);
    expect(alarm('invite-sweep-duration').Threshold).toBe(55_000);
  });

  it('return the alarms a gradual deploy rolls back on: failures and p99 duration', () => {
    expect((rollback.get('teams-create') ?? []).map((a) => a.node.id)).toEqual(['teams-create-5xx', 'teams-create-duration']);
    expect((rollback.get('mailer') ?? []).map((a) => a.node.id)).toEqual(['mailer-errors', 'mailer-duration']);
  });

  it("are made in the scope given (a nested stack), named after both stacks, notifying the parent's topic; the parent's dashboard shows the function", () => {
    const app = new App();
    const parent = new Stack(app, 'Test');
    const monitoring = new Monitoring(parent, 'Monitoring', {});
    const nested = new NestedStack(parent, 'Auth');
    const fn = new LambdaFunction(nested, 'AuthSignin', {
      runtime: Runtime.NODEJS_24_X,
      handler: 'index.handler',
      code: Code.fromInline('exports.handler = async () => ({});'),
    });
    const returned = monitoring.watchFunction({ name: 'auth-signin', fn, timeout: Duration.seconds(10), kind: 'api' }, nested);
    expect(returned.map((a) => Stack.of(a))).toEqual([nested, nested]);
    const inner = Template.fromStack(nested).toJSON() as { Resources: Record<string, Resource>; Parameters: Record<string, unknown> };
    const names = Object.values(inner.Resources)
      .filter((r) => r.Type === 'AWS::CloudWatch::Alarm')
      .map((r) => r.Properties as unknown as AlarmProps);
    expect(names.map((a) => a.AlarmName).sort()).toEqual(['Test-Auth-auth-signin-5xx', 'Test-Auth-auth-signin-duration']);
    // The topic's ARN comes in as a parameter, which the parent sets to its topic.
    const [parameter] = Object.keys(inner.Parameters);
    for (const a of names) {
      expect(a.AlarmActions).toEqual([{ Ref: parameter }]);
      expect(a.OKActions).toEqual([{ Ref: parameter }]);
    }
    const outer = Template.fromStack(parent).toJSON() as { Resources: Record<string, Resource> };
    const [topicId] = Object.entries(outer.Resources).find(([, r]) => r.Type === 'AWS::SNS::Topic') ?? [];
    const [, nestedResource] = Object.entries(outer.Resources).find(([, r]) => r.Type === 'AWS::CloudFormation::Stack') ?? [];
    expect(nestedResource?.Properties.Parameters).toEqual({ [parameter as string]: { Ref: topicId } });
    expect(Object.values(outer.Resources).filter((r) => r.Type === 'AWS::CloudWatch::Alarm').length).toBeGreaterThan(0);
    expect(dashboardOf(outer).text).toContain('auth: requests / min');
  });
});

describe('service alarms', () => {
  const { alarm } = withEmail;

  it('watch account concurrency against the applied quota, and account throttles', () => {
    const a = alarm('lambda-concurrency');
    expect(a.Metrics?.find((q) => q.Expression)?.Expression).toBe('100 * FILL(claimed, 0) / SERVICE_QUOTA(concurrent)');
    expect(a.Metrics?.flatMap((q) => (q.MetricStat ? [q.MetricStat.Metric.MetricName] : [])).sort()).toEqual([
      'ClaimedAccountConcurrency',
      'ConcurrentExecutions',
    ]);
    expect(a.Threshold).toBe(80);
    expect(alarm('lambda-throttles')).toMatchObject({ Namespace: 'AWS/Lambda', MetricName: 'Throttles' });
    expect(alarm('lambda-throttles').Dimensions).toBeUndefined();
  });

  it("watch the API's 5xx rate over its request count and its 429 share over every function", () => {
    const five = alarm('api-5xx-rate');
    expect(five.Metrics?.flatMap((q) => (q.MetricStat ? [q.MetricStat.Metric.MetricName] : [])).sort()).toEqual(['5xx', 'Count']);
    expect(five.Threshold).toBe(1);
    const limited = alarm('api-429-rate');
    expect(limited.Metrics).toHaveLength(1);
    expect(limited.Metrics?.[0]?.Expression).toBe(
      `SELECT AVG(${REQUEST_METRICS.rateLimited}) FROM SCHEMA("${METRIC_NAMESPACE}", ${FUNCTION_DIMENSION})`,
    );
    // The average of a 0-or-1 value is a share: 10% is 0.1.
    expect(limited).toMatchObject({ Threshold: 0.1, EvaluationPeriods: 3, DatapointsToAlarm: 3 });
  });

  it('watch throttles per index, system errors and transaction conflicts on the table', () => {
    for (const indexName of INDEXES) {
      const a = alarm(`table-throttles-${indexName}`);
      const names = a.Metrics?.flatMap((q) => (q.MetricStat ? [q.MetricStat.Metric.MetricName] : [])).sort();
      expect(names).toEqual(['ReadThrottleEvents', 'WriteThrottleEvents']);
      for (const q of a.Metrics?.filter((m) => m.MetricStat) ?? [])
        expect(q.MetricStat?.Metric.Dimensions).toContainEqual({ Name: 'GlobalSecondaryIndexName', Value: indexName });
    }
    expect(alarm('table-system-errors').Metrics?.filter((q) => q.MetricStat)).toHaveLength(TABLE_OPERATIONS.length);
    const conflicts = alarm('table-transaction-conflicts');
    expect(conflicts.Metrics?.flatMap((q) => (q.MetricStat ? [q.MetricStat.Metric.MetricName] : [])).sort()).toEqual([
      'SuccessfulRequestLatency',
      'TransactionConflict',
    ]);
  });

  it("watch the dead-letter queue's depth and age, keeping their state while SQS publishes nothing", () => {
    expect(alarm('mail-dead-letters-depth')).toMatchObject({
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Threshold: 1,
      TreatMissingData: 'ignore',
    });
    expect(alarm('mail-dead-letters-age')).toMatchObject({
      MetricName: 'ApproximateAgeOfOldestMessage',
      Threshold: 12 * 3600,
      TreatMissingData: 'ignore',
    });
    expect(alarm('mail-dead-letters-depth').AlarmDescription).toMatch(/^An e-mail could not be delivered after every retry/);
  });

  it("watch the mailer's iterator age", () => {
    expect(alarm('mailer-iterator-age')).toMatchObject({ MetricName: 'IteratorAge', Statistic: 'Maximum', Threshold: 300_000 });
  });

  it("watch the account's SES bounce and complaint rates at the review levels", () => {
    for (const { alarm: of } of [withEmail, without]) {
      expect(of('ses-bounce-rate')).toMatchObject({ Namespace: 'AWS/SES', MetricName: 'Reputation.BounceRate', Threshold: 0.05 });
      expect(of('ses-complaint-rate')).toMatchObject({ Namespace: 'AWS/SES', MetricName: 'Reputation.ComplaintRate', Threshold: 0.001 });
    }
  });
});

describe('the dashboard', () => {
  const { text, parsed } = dashboardOf(withEmail.json);
  const titles = parsed.widgets.map((w) => w.properties.title ?? '');

  it('groups routes by their name prefix', () => {
    expect(API.map(routeGroup)).toEqual(['teams', 'teams', 'auth', 'auth', 'my-invites']);
    expect(['invites-accept', 'members-remove', 'docs-assets', 'openapi', 'fallback'].map(routeGroup)).toEqual([
      'invites',
      'members',
      'docs',
      'docs',
      'fallback',
    ]);
  });

  it('shows the golden signals per route group, in a fixed order', () => {
    for (const group of ['auth', 'teams', 'my-invites']) {
      for (const signal of ['requests', '5xx and 429', 'latency p50 / p99', 'throttles']) {
        expect(
          titles.some((t) => t.startsWith(`${group}: `) && t.includes(signal)),
          `${group} ${signal}`,
        ).toBe(true);
      }
    }
    const first = (group: string): number => titles.findIndex((t) => t.startsWith(`${group}: `));
    expect(first('auth')).toBeLessThan(first('teams'));
    expect(first('teams')).toBeLessThan(first('my-invites'));
    const auth = parsed.widgets.find((w) => w.properties.title === 'auth: latency p50 / p99 (ms)');
    expect(JSON.stringify(auth?.properties.metrics)).toContain('"p99"');
    expect(JSON.stringify(auth?.properties.metrics)).toContain('"jwks"');
  });

  it('shows the API, Lambda capacity, the table, background work, domain events and mail', () => {
    for (const title of [
      'Service alarms',
      'API requests and errors / min',
      'API error rates',
      'API latency (ms)',
      'Lambda concurrency (account)',
      'DynamoDB consumed capacity units / 5 min',
      'DynamoDB throttles by operation and index',
      'Stream iterator age (ms)',
      'Dead-letter queues',
      'Sign-ins and sign-ups / 5 min',
      'Invites / 5 min',
      'Outbox',
      'Mail: bounces and complaints',
    ]) {
      expect(titles, title).toContain(title);
    }
    expect(text).toContain('MailBounced');
    expect(dashboardOf(without.json).text).not.toContain('MailBounced');
  });

  it("stays within CloudWatch's limits", () => {
    expect(parsed.widgets.length).toBeLessThanOrEqual(100);
    for (const w of parsed.widgets) {
      expect(w.properties.metrics?.length ?? 0).toBeLessThanOrEqual(500);
      expect(w.width).toBeLessThanOrEqual(24);
    }
    expect(parsed.widgets.reduce((n, w) => n + (w.properties.metrics?.length ?? 0), 0)).toBeLessThanOrEqual(2500);
    expect(text.length).toBeLessThan(100_000);
  });
});

describe('cdk-nag AwsSolutions', () => {
  it('finds nothing in the monitoring construct', () => {
    const report = new AwsSolutionsChecks().validateScope(withEmail.app);
    const mine = report.violations.flatMap((v) =>
      v.violatingResources
        .filter((r) => (r.constructPath ?? '').startsWith('Test/Monitoring'))
        .map((r) => `${v.ruleName} at ${r.constructPath}`),
    );
    expect(mine).toEqual([]);
  });
});
