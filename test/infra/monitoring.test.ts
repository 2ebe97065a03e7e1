import { App, Duration, NestedStack, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { AttributeType, BillingMode, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { deployOptions } from '#infra/options.ts';
import { describe, expect, it } from 'vitest';
import {
  MAX_ALARM_RULE,
  Monitoring,
  type MonitoringProps,
  SUPPRESSOR_EXTENSION_SECONDS,
  SUPPRESSOR_WAIT_SECONDS,
} from '#infra/monitoring/monitoring.ts';
import { DURATION_SHARE, LATENCY_SLO_MS, MAX_ALARM_METRICS, type WatchedFunction, routeGroup } from '#infra/monitoring/metrics.ts';
import { RUNBOOK, RUNBOOK_SECTIONS } from '#infra/monitoring/runbook.ts';
import { SYSTEM_ERROR_OPERATIONS } from '#infra/monitoring/table-alarms.ts';
import { METRIC_NAMESPACE, REQUEST_METRICS, ROUTE_GROUP_DIMENSION } from '#lib/core/metric-names.ts';

/**
 * The monitoring construct on a small stack of its own: a table, plain inline functions (no
 * bundling), an HTTP API, dead-letter and work queues.
 */
interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
}
interface MetricQuery {
  Id: string;
  Expression?: string;
  MetricStat?: {
    Metric: { Namespace: string; MetricName: string; Dimensions?: { Name: string; Value: unknown }[] };
    Stat: string;
    Period: number;
  };
}
interface AlarmProps {
  AlarmName: string;
  AlarmDescription: string;
  AlarmActions?: unknown[];
  OKActions?: unknown[];
  Namespace?: string;
  MetricName?: string;
  Dimensions?: { Name: string; Value: unknown }[];
  Statistic?: string;
  ExtendedStatistic?: string;
  Metrics?: MetricQuery[];
  Threshold: number;
  EvaluationPeriods: number;
  DatapointsToAlarm: number;
  TreatMissingData: string;
}
interface CompositeProps {
  AlarmName: string;
  AlarmRule: unknown;
  AlarmActions: unknown[];
  OKActions: unknown[];
  ActionsSuppressor?: unknown;
  ActionsSuppressorWaitPeriod?: number;
  ActionsSuppressorExtensionPeriod?: number;
}

const API = ['teams-create', 'teams-list', 'auth-signin', 'jwks', 'my-invites-list'];

interface BuildOptions {
  props?: Omit<MonitoringProps, 'alarmEmail'> & { alarmEmail?: string };
  mail?: string;
  deadLetters?: number;
}

const build = ({ props = {}, mail, deadLetters = 2 }: BuildOptions = {}) => {
  const app = new App();
  const stack = new Stack(app, 'Test');
  const table = new Table(stack, 'Table', {
    partitionKey: { name: 'pk', type: AttributeType.STRING },
    sortKey: { name: 'sk', type: AttributeType.STRING },
    billingMode: BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
  });
  const fn = (id: string, timeout: Duration): LambdaFunction =>
    new LambdaFunction(stack, id, {
      runtime: Runtime.NODEJS_24_X,
      handler: 'index.handler',
      code: Code.fromInline('exports.handler = async () => ({});'),
      timeout,
    });
  const queue = (id: string): Queue => new Queue(stack, id, { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true });
  const api = new HttpApi(stack, 'Api');

  const monitoring = new Monitoring(stack, 'Monitoring', props);
  const watched: WatchedFunction[] = [
    ...API.map((name) => ({ name, fn: fn(name, Duration.seconds(10)), timeout: Duration.seconds(10), kind: 'api' as const })),
    { name: 'stream-dispatch', fn: fn('stream-dispatch', Duration.seconds(30)), timeout: Duration.seconds(30), kind: 'stream' },
    {
      name: 'invite-sweep',
      fn: fn('invite-sweep', Duration.seconds(60)),
      timeout: Duration.seconds(60),
      budget: Duration.seconds(50),
      kind: 'schedule',
    },
    { name: 'keys-rotate', fn: fn('keys-rotate', Duration.seconds(30)), timeout: Duration.seconds(30), kind: 'rotation' },
  ];
  const returned = new Map(watched.map((w) => [w.name, monitoring.watchFunction(w)]));
  monitoring.watchApi(api);
  monitoring.watchTable(table, ['gsi1']);
  for (let i = 0; i < deadLetters; i += 1) monitoring.watchQueue(`DeadLetters${i}`, queue(`DeadLetters${i}`), `Dead letters number ${i}`);
  monitoring.watchBacklog('MailQueue', queue('MailQueue'), 'Mail is behind');
  monitoring.watchBacklog('WebhookQueue', queue('WebhookQueue'), 'Webhook deliveries are behind');
  const dispatch = watched.find((w) => w.name === 'stream-dispatch');
  if (dispatch) monitoring.watchStream(dispatch.fn, 'stream-dispatch');
  monitoring.watchMail(mail);

  const json = Template.fromStack(stack).toJSON() as { Resources: Record<string, Resource> };
  const ofType = (type: string): [string, Resource][] => Object.entries(json.Resources).filter(([, r]) => r.Type === type);
  const alarms = ofType('AWS::CloudWatch::Alarm').map(([, r]) => r.Properties as unknown as AlarmProps);
  const composites = ofType('AWS::CloudWatch::CompositeAlarm').map(([, r]) => r.Properties as unknown as CompositeProps);
  const alarm = (id: string): AlarmProps => {
    const found = alarms.find((a) => a.AlarmName === `Test-${id}`);
    if (!found) throw new Error(`no alarm ${id}`);
    return found;
  };
  const idOf = (id: string): string => {
    const found = ofType('AWS::CloudWatch::Alarm').find(([, r]) => r.Properties.AlarmName === `Test-${id}`);
    if (!found) throw new Error(`no alarm ${id}`);
    return found[0];
  };
  const logicalId = (name: string): string => stack.getLogicalId(watched.find((w) => w.name === name)?.fn.node.defaultChild as never);
  return { app, stack, json, ofType, alarms, composites, alarm, idOf, logicalId, returned };
};

const defaults = build({ props: { alarmEmail: 'ops@example.com' } });
const [topicId] = defaults.ofType('AWS::SNS::Topic')[0] ?? [];

const notifying = (alarms: readonly { AlarmName: string; AlarmActions?: unknown[] }[]): string[] =>
  alarms.filter((a) => (a.AlarmActions ?? []).length > 0).map((a) => a.AlarmName.replace(/^Test-/, ''));

/** The dashboard body with each CloudFormation token replaced by a placeholder, parsed. */
const dashboardOf = (json: { Resources: Record<string, Resource> }) => {
  const [dashboard] = Object.values(json.Resources).filter((r) => r.Type === 'AWS::CloudWatch::Dashboard');
  if (!dashboard) return undefined;
  const body = dashboard.Properties.DashboardBody as string | { 'Fn::Join': [string, unknown[]] };
  const text = typeof body === 'string' ? body : body['Fn::Join'][1].map((part) => (typeof part === 'string' ? part : 'TOKEN')).join('');
  return {
    text,
    parsed: JSON.parse(text) as {
      widgets: { type: string; width: number; properties: { title?: string; metrics?: unknown[]; markdown?: string } }[];
    },
  };
};

/** A composite alarm's rule with each alarm reference as the logical id it names. */
const ruleOf = (composite: CompositeProps): string => {
  const rule = composite.AlarmRule as string | { 'Fn::Join': [string, unknown[]] };
  if (typeof rule === 'string') return rule;
  return rule['Fn::Join'][1]
    .map((part) => (typeof part === 'string' ? part : ((part as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0] ?? '?')))
    .join('');
};

describe('the alarm topic', () => {
  it('is the action of every alarm that notifies, on ALARM and on OK', () => {
    for (const a of [...defaults.alarms, ...defaults.composites].filter((x) => (x.AlarmActions ?? []).length > 0)) {
      expect(a.AlarmActions, a.AlarmName).toEqual([{ Ref: topicId }]);
      expect(a.OKActions, a.AlarmName).toEqual([{ Ref: topicId }]);
    }
  });

  it("is encrypted with a key only this account's alarms may use (not rotated: it keeps no data, and rotations are priced), allows only SSL, and lets only those alarms publish", () => {
    const [, topic] = defaults.ofType('AWS::SNS::Topic')[0] ?? [];
    expect(topic?.Properties.KmsMasterKeyId).toBeDefined();
    const [, key] = defaults.ofType('AWS::KMS::Key')[0] ?? [];
    expect(key?.Properties.EnableKeyRotation).toBe(false);
    const keyStatements = (key?.Properties.KeyPolicy as { Statement: { Principal: unknown; Condition?: Record<string, unknown> }[] })
      .Statement;
    const forAlarms = keyStatements.filter(
      (s) => JSON.stringify(s.Principal).includes('.amazonaws.com') && !JSON.stringify(s.Principal).includes('iam'),
    );
    expect(forAlarms.map((s) => JSON.stringify(s.Principal))).toEqual(['{"Service":"cloudwatch.amazonaws.com"}']);
    expect(Object.keys(forAlarms[0]?.Condition ?? {}).sort()).toEqual(['ArnLike', 'StringEquals']);
    expect(JSON.stringify(forAlarms[0]?.Condition)).toContain('AWS::AccountId');
    const [, policy] = defaults.ofType('AWS::SNS::TopicPolicy')[0] ?? [];
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
    const subscriptions = defaults.ofType('AWS::SNS::Subscription').map(([, s]) => s.Properties);
    expect(subscriptions).toEqual([{ Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: { Ref: topicId } }]);
    expect(build().ofType('AWS::SNS::Subscription')).toEqual([]);
  });
});

describe('by default', () => {
  it('pages on the API, the table and background work: five alarms, none per function or per queue', () => {
    expect(notifying([...defaults.alarms, ...defaults.composites]).sort()).toEqual(
      ['api', 'backlog', 'dead-letters', 'stream-iterator-age', 'table-errors'].sort(),
    );
    expect(defaults.alarms.map((a) => a.AlarmName.replace(/^Test-/, '')).sort()).toEqual(
      ['api-429-rate', 'api-availability', 'api-latency', 'backlog', 'dead-letters', 'stream-iterator-age', 'table-errors'].sort(),
    );
    for (const [name, returned] of defaults.returned) expect(returned, name).toEqual([]);
  });

  it('has no dashboard, no budget and no SES alarms (the log transport sends nothing)', () => {
    expect(defaults.ofType('AWS::CloudWatch::Dashboard')).toEqual([]);
    expect(defaults.ofType('AWS::Budgets::Budget')).toEqual([]);
    expect(JSON.stringify(defaults.alarms)).not.toContain('AWS/SES');
  });
});

describe('the api alarm', () => {
  const [composite] = defaults.composites;
  const rule = composite ? ruleOf(composite) : '';

  it('pages when the API is unavailable, slow or refusing, silenced while the table fails', () => {
    expect(composite?.AlarmName).toBe('Test-api');
    for (const id of ['api-availability', 'api-latency', 'api-429-rate']) {
      expect(rule).toContain(`ALARM("${defaults.idOf(id)}")`);
      expect(defaults.alarm(id).AlarmActions ?? []).toEqual([]);
    }
    expect(rule.split(' OR ')).toHaveLength(3);
    expect(composite?.ActionsSuppressor).toEqual({ 'Fn::GetAtt': [defaults.idOf('table-errors'), 'Arn'] });
    expect(composite).toMatchObject({
      ActionsSuppressorWaitPeriod: SUPPRESSOR_WAIT_SECONDS,
      ActionsSuppressorExtensionPeriod: SUPPRESSOR_EXTENSION_SECONDS,
    });
  });

  it("reads API Gateway's own 5xx, count and latency against the objectives, and the API-wide RateLimited share", () => {
    const availability = defaults.alarm('api-availability');
    expect(availability.Metrics?.flatMap((q) => (q.MetricStat ? [q.MetricStat.Metric.MetricName] : [])).sort()).toEqual(['5xx', 'Count']);
    expect(availability.Threshold).toBe(1);
    expect(defaults.alarm('api-latency')).toMatchObject({
      Namespace: 'AWS/ApiGateway',
      MetricName: 'Latency',
      ExtendedStatistic: 'p99',
      Threshold: LATENCY_SLO_MS,
    });
    expect(defaults.alarm('api-429-rate')).toMatchObject({
      Namespace: METRIC_NAMESPACE,
      MetricName: REQUEST_METRICS.rateLimited,
      Statistic: 'Average',
      Threshold: 0.1,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
    });
    expect(defaults.alarm('api-429-rate').Dimensions).toBeUndefined();
  });
});

describe('the table alarm', () => {
  it('sums the system errors of the reads every request makes and the table throttle events, in one-minute periods', () => {
    const a = defaults.alarm('table-errors');
    const stats = (a.Metrics ?? []).flatMap((q) => (q.MetricStat ? [q.MetricStat] : []));
    expect(stats.map((s) => s.Metric.MetricName).sort()).toEqual(
      ['ReadThrottleEvents', 'WriteThrottleEvents', ...SYSTEM_ERROR_OPERATIONS.map(() => 'SystemErrors')].sort(),
    );
    expect(
      stats
        .filter((s) => s.Metric.MetricName === 'SystemErrors')
        .map((s) => s.Metric.Dimensions?.find((d) => d.Name === 'Operation')?.Value),
    ).toEqual([...SYSTEM_ERROR_OPERATIONS]);
    for (const s of stats) expect(s.Period).toBe(60);
    expect(a).toMatchObject({ EvaluationPeriods: 5, DatapointsToAlarm: 3, Threshold: 1 });
  });
});

describe('background alarms', () => {
  it('sum the depth of every dead-letter queue in one alarm, keeping its state while SQS publishes nothing', () => {
    const a = defaults.alarm('dead-letters');
    const stats = (a.Metrics ?? []).filter((q) => q.MetricStat);
    expect(stats).toHaveLength(2);
    for (const q of stats)
      expect(q.MetricStat?.Metric).toMatchObject({ Namespace: 'AWS/SQS', MetricName: 'ApproximateNumberOfMessagesVisible' });
    expect(a.Metrics?.find((q) => q.Expression)?.Expression).toBe('FILL(m0, 0) + FILL(m1, 0)');
    expect(a).toMatchObject({ Threshold: 1, TreatMissingData: 'ignore' });
    expect(a.AlarmDescription).toContain('DeadLetters0: Dead letters number 0.');
  });

  it('make a second alarm of a kind past 10 members, each reading at most 10 metrics', () => {
    const many = build({ deadLetters: 12 });
    const first = many.alarm('dead-letters');
    const second = many.alarm('dead-letters-2');
    expect((first.Metrics ?? []).filter((q) => q.MetricStat)).toHaveLength(MAX_ALARM_METRICS);
    expect((second.Metrics ?? []).filter((q) => q.MetricStat)).toHaveLength(2);
    // Twelve descriptions do not fit 1,024 characters: the alarm names its queues only.
    expect(first.AlarmDescription.length).toBeLessThanOrEqual(1024);
    expect(first.AlarmDescription).toContain('DeadLetters9');
  });

  it("watch every work queue's oldest message and the stream reader's iterator age, each in one alarm", () => {
    const b = defaults.alarm('backlog');
    expect(b.Metrics?.find((q) => q.Expression)?.Expression).toBe('MAX([FILL(m0, 0), FILL(m1, 0)])');
    expect(b).toMatchObject({ Threshold: 3600, EvaluationPeriods: 3, TreatMissingData: 'notBreaching' });
    const s = defaults.alarm('stream-iterator-age');
    expect(s.Metrics?.find((q) => q.Expression)?.Expression).toBe('FILL(m0, 0)');
    expect(s.Metrics?.find((q) => q.MetricStat)?.MetricStat?.Metric).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'IteratorAge',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: defaults.logicalId('stream-dispatch') } }],
    });
    expect(s.Threshold).toBe(300_000);
  });

  it("watch the account's SES bounce and complaint rates only when mail goes through SES", () => {
    const ses = build({ mail: 'roster-mail' });
    expect(ses.alarm('ses-bounce-rate')).toMatchObject({ Namespace: 'AWS/SES', MetricName: 'Reputation.BounceRate', Threshold: 0.05 });
    expect(ses.alarm('ses-complaint-rate')).toMatchObject({
      Namespace: 'AWS/SES',
      MetricName: 'Reputation.ComplaintRate',
      Threshold: 0.001,
    });
    expect(notifying(ses.alarms)).toContain('ses-bounce-rate');
  });
});

describe('per-function alarms', () => {
  const gradual = build({ props: { rollbackAlarms: true } });
  const paging = build({ props: { functionAlarms: true } });

  it("with gradual deploys: each API function's health and its route group's 5xx, silent, returned for the rollback", () => {
    for (const name of API) {
      const returned = gradual.returned.get(name) ?? [];
      expect(
        returned.map((a) => a.node.id),
        name,
      ).toEqual([`${name}-health`, `${routeGroup(name)}-5xx`]);
    }
    // The background functions have no canary.
    expect(gradual.returned.get('invite-sweep')).toEqual([]);
    expect(notifying([...gradual.alarms, ...gradual.composites]).sort()).toEqual(
      notifying([...defaults.alarms, ...defaults.composites]).sort(),
    );
    expect(gradual.alarms.filter((a) => /-(health|5xx)$/.test(a.AlarmName)).every((a) => (a.AlarmActions ?? []).length === 0)).toBe(true);
    // One 5xx alarm per route group, shared by its functions.
    expect(
      gradual.alarms
        .filter((a) => a.AlarmName.endsWith('-5xx'))
        .map((a) => a.AlarmName)
        .sort(),
    ).toEqual(['Test-auth-5xx', 'Test-my-invites-5xx', 'Test-teams-5xx']);
  });

  it("make the functions' health inputs of their route group's silent composite, each an input of the api alarm, but not the route groups' 5xx", () => {
    const composite = (name: string) =>
      gradual.composites.find((c) => c.AlarmName === `Test-${name}`) as CompositeProps & { ActionsEnabled?: boolean };
    const api = ruleOf(composite('api'));
    const groups = [...new Set(API.map(routeGroup))];
    // The api alarm names each group's composite (by its logical id here) and no function alarm.
    expect(api.split(' OR ').filter((input) => input.includes('Functions'))).toHaveLength(groups.length);
    for (const group of groups) {
      const members = composite(`${group}-functions`);
      expect(members.ActionsEnabled, group).toBe(false);
      expect(members.AlarmActions ?? [], group).toEqual([]);
      const rule = ruleOf(members);
      for (const name of API.filter((n) => routeGroup(n) === group)) expect(rule).toContain(`ALARM("${gradual.idOf(`${name}-health`)}")`);
      expect(rule.length).toBeLessThan(MAX_ALARM_RULE);
    }
    for (const name of API) expect(api).not.toContain(gradual.idOf(`${name}-health`));
    expect(api).not.toContain(gradual.idOf('teams-5xx'));
  });

  it("read Lambda's Errors and p99 Duration: 80% of the timeout, or halfway from a time budget to the timeout", () => {
    expect(DURATION_SHARE).toBe(0.8);
    const health = gradual.alarm('teams-create-health');
    expect(health.Metrics?.find((q) => q.Expression)?.Expression).toBe('IF(FILL(errors, 0) >= 1, 1, IF(FILL(p99, 0) >= 8000, 1, 0))');
    expect(
      health.Metrics?.flatMap((q) =>
        q.MetricStat ? [`${q.MetricStat.Metric.MetricName} ${q.MetricStat.Stat} ${q.MetricStat.Period}`] : [],
      ),
    ).toEqual(['Errors Sum 60', 'Duration p99 60']);
    expect(paging.alarm('invite-sweep-health').Metrics?.find((q) => q.Expression)?.Expression).toContain('>= 55000');
    expect(paging.alarm('keys-rotate-health').Metrics?.find((q) => q.Expression)?.Expression).toContain('>= 24000');
  });

  it("read each route group's published ServerErrors", () => {
    expect(gradual.alarm('teams-5xx')).toMatchObject({
      Namespace: METRIC_NAMESPACE,
      MetricName: REQUEST_METRICS.serverErrors,
      Dimensions: [{ Name: ROUTE_GROUP_DIMENSION, Value: 'teams' }],
      Statistic: 'Sum',
      DatapointsToAlarm: 2,
      EvaluationPeriods: 5,
    });
  });

  it('with functionAlarms: every function gets its own, and they page', () => {
    const names = notifying(paging.alarms);
    for (const name of [...API, 'stream-dispatch', 'invite-sweep', 'keys-rotate']) expect(names, name).toContain(`${name}-health`);
    expect(names).toContain('teams-5xx');
    // Paging on their own, they are not inputs of the api alarm as well (one page each, not two).
    expect(ruleOf(paging.composites[0] as CompositeProps).split(' OR ')).toHaveLength(3);
  });

  it("are made in the scope given (a nested stack), named after both stacks, notifying the parent's topic", () => {
    const app = new App();
    const parent = new Stack(app, 'Test');
    const monitoring = new Monitoring(parent, 'Monitoring', { rollbackAlarms: true, functionAlarms: true });
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
    expect(names.map((a) => a.AlarmName).sort()).toEqual(['Test-Auth-auth-5xx', 'Test-Auth-auth-signin-health']);
    const [parameter] = Object.keys(inner.Parameters);
    for (const a of names) expect(a.AlarmActions).toEqual([{ Ref: parameter }]);
  });
});

describe('every alarm', () => {
  const everything = [
    defaults,
    build({ props: { rollbackAlarms: true }, mail: 'roster-mail' }),
    build({ props: { functionAlarms: true } }),
  ];

  it('has a stable unique name and a description ending with its runbook section, within 1,024 characters', () => {
    const used = new Set<string>();
    for (const { alarms, composites } of everything) {
      const all = [...alarms, ...composites.map((c) => c as unknown as AlarmProps)];
      expect(new Set(all.map((a) => a.AlarmName)).size).toBe(all.length);
      for (const a of all) {
        const match = new RegExp(`Runbook: ${RUNBOOK}#([a-z0-9-]+)$`).exec(a.AlarmDescription);
        expect(match?.[1], a.AlarmName).toBeDefined();
        const section = match?.[1] as keyof typeof RUNBOOK_SECTIONS;
        expect(Object.keys(RUNBOOK_SECTIONS), a.AlarmName).toContain(section);
        expect(a.AlarmDescription).toContain(RUNBOOK_SECTIONS[section]);
        expect(a.AlarmDescription.length, a.AlarmName).toBeLessThanOrEqual(1024);
        used.add(section);
      }
    }
    // Each runbook section is used by some alarm, so the runbook has no section for nothing.
    for (const section of Object.keys(RUNBOOK_SECTIONS)) expect(used, section).toContain(section);
  });

  it('wraps in FILL each metric its expressions add, divide or compare, and reads at most 10 metrics', () => {
    for (const { alarms } of everything) {
      for (const a of alarms) {
        const ids = (a.Metrics ?? []).filter((q) => q.MetricStat).map((q) => q.Id);
        expect(ids.length, a.AlarmName).toBeLessThanOrEqual(MAX_ALARM_METRICS);
        for (const m of (a.Metrics ?? []).filter((q) => q.Expression)) {
          let rest = m.Expression ?? '';
          for (const id of ids) rest = rest.replaceAll(`FILL(${id}, 0)`, '');
          for (const id of ids) expect(rest, `${a.AlarmName}: ${m.Expression}`).not.toMatch(new RegExp(`\\b${id}\\b`));
        }
      }
    }
  });
});

describe('the dashboard (-c dashboard=true)', () => {
  const shown = dashboardOf(build({ props: { dashboard: true }, mail: 'roster-mail' }).json);
  const titles = shown?.parsed.widgets.map((w) => w.properties.title ?? '') ?? [];

  it('shows the golden signals per route group from Lambda and the published 5xx, in a fixed order', () => {
    for (const group of ['auth', 'teams', 'my-invites']) {
      for (const signal of ['requests', '5xx answers and crashes', 'latency p50 / p99', 'throttles']) {
        expect(
          titles.some((t) => t.startsWith(`${group}: `) && t.includes(signal)),
          `${group} ${signal}`,
        ).toBe(true);
      }
    }
    const first = (group: string): number => titles.findIndex((t) => t.startsWith(`${group}: `));
    expect(first('auth')).toBeLessThan(first('teams'));
    expect(first('teams')).toBeLessThan(first('my-invites'));
    expect(shown?.text).toContain(`"${ROUTE_GROUP_DIMENSION}","teams"`);
  });

  it('shows the API, Lambda capacity, the table, background work, domain events and mail', () => {
    for (const title of [
      'Alarms that notify',
      'API requests and errors / min',
      'API error rates',
      'API latency (ms)',
      'Lambda concurrency (account)',
      'DynamoDB consumed capacity units / 5 min',
      'DynamoDB throttles by operation and index',
      'Stream iterator age (ms) and work queues (oldest, s)',
      'Dead-letter queues',
      'Sign-ins and sign-ups / 5 min',
      'Invites / 5 min',
      'Outbox',
      'Mail: bounces and complaints',
    ]) {
      expect(titles, title).toContain(title);
    }
  });

  it("stays within CloudWatch's limits", () => {
    const widgets = shown?.parsed.widgets ?? [];
    expect(widgets.length).toBeLessThanOrEqual(100);
    for (const w of widgets) {
      expect(w.properties.metrics?.length ?? 0).toBeLessThanOrEqual(500);
      expect(w.width).toBeLessThanOrEqual(24);
    }
    expect(shown?.text.length ?? 0).toBeLessThan(100_000);
  });
});

describe('the budget (-c monthlyBudget=USD)', () => {
  const budgeted = build({ props: { monthlyBudget: 25 } });

  it("notifies the topic when the account's actual cost passes 80% of it and its forecast passes it", () => {
    const [, budget] = budgeted.ofType('AWS::Budgets::Budget')[0] ?? [];
    expect(budget?.Properties).toMatchObject({
      Budget: { BudgetType: 'COST', TimeUnit: 'MONTHLY', BudgetLimit: { Amount: 25, Unit: 'USD' }, BudgetName: 'Test-monthly-cost' },
    });
    const notifications = budget?.Properties.NotificationsWithSubscribers as {
      Notification: Record<string, unknown>;
      Subscribers: unknown[];
    }[];
    expect(notifications.map((n) => [n.Notification.NotificationType, n.Notification.Threshold])).toEqual([
      ['ACTUAL', 80],
      ['FORECASTED', 100],
    ]);
    for (const n of notifications)
      expect(n.Subscribers).toEqual([{ SubscriptionType: 'SNS', Address: { Ref: budgeted.ofType('AWS::SNS::Topic')[0]?.[0] } }]);
  });

  it("lets only this account's budgets publish to the topic and use its key", () => {
    const [, policy] = budgeted.ofType('AWS::SNS::TopicPolicy')[0] ?? [];
    const text = JSON.stringify(policy?.Properties);
    expect(text).toContain('budgets.amazonaws.com');
    expect(text).toContain(':budgets::');
    expect(JSON.stringify(budgeted.ofType('AWS::KMS::Key')[0]?.[1].Properties)).toContain('budgets.amazonaws.com');
  });
});

describe('cdk-nag AwsSolutions', () => {
  it('finds nothing in the monitoring construct', () => {
    for (const built of [defaults, build({ props: { rollbackAlarms: true, dashboard: true, monthlyBudget: 10 }, mail: 'x' })]) {
      const report = new AwsSolutionsChecks().validateScope(built.app);
      const mine = report.violations.flatMap((v) =>
        v.violatingResources
          .filter((r) => (r.constructPath ?? '').startsWith('Test/Monitoring'))
          .map((r) => `${v.ruleName} at ${r.constructPath}`),
      );
      expect(mine).toEqual([]);
    }
  });
});

describe('the monitoring options (-c name=value)', () => {
  const optionsOf = (context: Record<string, unknown>) => deployOptions(new App({ context }).node);

  it('are off by default: no per-function alarms, no dashboard, no budget', () => {
    expect(optionsOf({})).toMatchObject({ functionAlarms: false, dashboard: false, monthlyBudget: undefined });
    expect(optionsOf({ functionAlarms: 'true', dashboard: true })).toMatchObject({ functionAlarms: true, dashboard: true });
    expect(() => optionsOf({ dashboard: 'yes' })).toThrow('context dashboard must be true or false, not "yes"');
  });

  it('take a budget in US dollars, cents at most', () => {
    expect(optionsOf({ monthlyBudget: ' 12.50 ' }).monthlyBudget).toBe(12.5);
    expect(optionsOf({ monthlyBudget: 0.29 }).monthlyBudget).toBe(0.29);
    for (const bad of ['0', '-5', '1.234', 'ten', ''])
      expect(() => optionsOf({ monthlyBudget: bad }), bad).toThrow(/^context monthlyBudget must be a positive amount of US dollars/);
  });
});
