import { App, NestedStack, Stack } from 'aws-cdk-lib';
import type { Alias } from 'aws-cdk-lib/aws-lambda';
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { builtinModules, isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { BUILTINS, ESBUILD, type Endpoint } from '#infra/endpoint.ts';
import { STACK_ID } from '#infra/stack.ts';
import { ACCESS_LOG_FIELDS, CREDENTIAL_ROUTES, FUNCTION_STACKS, LIVE_ALIAS, functionStackOf } from '#infra/api-settings.ts';
import { KEY_ROTATION, KEY_ROTATION_DAYS } from '#infra/background.ts';
import { WEBHOOK_PARTITIONS, WEBHOOK_SWEEP_ATTRIBUTES } from '#infra/webhooks.ts';
import { DEFAULT_OPTIONS } from '#infra/options.ts';
import { CURSOR_KEY_ITEM, cursorKey, cursorKeyPartitionKey } from '#lib/db/entities/cursor-key.ts';
import { SIGNING_KEYS_ITEM, signingKeys, signingKeysPartitionKey } from '#lib/db/entities/keys.ts';
import { KEYS, createTableInput, TTL_ATTRIBUTE } from '#lib/db/entities/table.ts';
import { FALLBACK, FUNCTION_DEFAULTS, ROUTES } from '#lib/http/routes.ts';
import {
  CLEANUP_SWEEP,
  INVITE_SWEEP,
  MAILER,
  OUTBOX_SWEEP,
  STREAM_DISPATCH,
  TEAM_CLEANUP,
  WEBHOOK_ATTEMPTS,
  WEBHOOK_DELIVERY,
  WEBHOOK_FANOUT,
  WEBHOOK_SWEEP,
  DOMAIN_RECHECK,
  WORK_QUEUES,
  workVisibilitySeconds,
} from '#lib/http/background.ts';
import { RESERVE_MS as SWEEP_RESERVE_MS } from '#lib/teams/invites/sweep.ts';
import { RESERVE_MS } from '#lib/teams/cleanup.ts';
import { RESERVE_MS as OUTBOX_RESERVE_MS } from '#lib/mail/outbox-sweep.ts';
import { DURATION_SHARE, routeGroup } from '#infra/monitoring/metrics.ts';
import { actionsOf, type Resource, type Statement, synth } from './template.ts';

/**
 * K1–K5 (and G9's rotation schedule) on the synthesized templates of both stacks with the default
 * options: the data stack (table, signing key, dead-letter queues) and the functions' stack.
 * Bundling is skipped here (`aws:cdk:bundling-stacks: []`); the last block bundles one function
 * with the same esbuild settings and calls it. Mail settings: mail.test.ts; versions, aliases,
 * deployment groups, tracing and asset hashes: rollout.test.ts; the options' checks: options.test.ts.
 */
const built = synth();
const { stack, dataJson, dataResources, json, resources, ofType, only, logicalId, functionOf, statementsOf, allStatements, variables } =
  built;

const dataOfType = (type: string): [string, Resource][] => Object.entries(dataResources).filter(([, r]) => r.Type === type);
const dataOnly = (type: string): [string, Resource] => {
  const [first, ...more] = dataOfType(type);
  if (!first || more.length > 0) throw new Error(`expected exactly one ${type} in the data stack`);
  return first;
};
const [tableId, table] = dataOnly('AWS::DynamoDB::Table');
const [secretId, secret] = dataOnly('AWS::SecretsManager::Secret');
const [, stage] = only('AWS::ApiGatewayV2::Stage');

const routeNames = ROUTES.map((r) => r.name);
/** The API's functions: one per route, and the fallback. */
const allNames = [...routeNames, FALLBACK];
/** The background functions of a default deploy (log transport); the SES events' function comes with SES (mail.test.ts). */
const backgroundNames = [
  KEY_ROTATION,
  STREAM_DISPATCH.name,
  MAILER.name,
  TEAM_CLEANUP.name,
  CLEANUP_SWEEP.name,
  INVITE_SWEEP.name,
  OUTBOX_SWEEP.name,
  WEBHOOK_FANOUT.name,
  WEBHOOK_DELIVERY.name,
  WEBHOOK_SWEEP.name,
  DOMAIN_RECHECK.name,
];
const everyFunction = [...allNames, ...backgroundNames];
/** The functions that are not behind the gateway and have timeouts of their own. */
const ownTimeouts: Record<string, number> = {
  [STREAM_DISPATCH.name]: STREAM_DISPATCH.timeoutSeconds,
  [MAILER.name]: MAILER.timeoutSeconds,
  [CLEANUP_SWEEP.name]: CLEANUP_SWEEP.timeoutSeconds,
  [TEAM_CLEANUP.name]: TEAM_CLEANUP.timeoutSeconds,
  [INVITE_SWEEP.name]: INVITE_SWEEP.timeoutSeconds,
  [OUTBOX_SWEEP.name]: OUTBOX_SWEEP.timeoutSeconds,
  [WEBHOOK_FANOUT.name]: WEBHOOK_FANOUT.timeoutSeconds,
  [WEBHOOK_DELIVERY.name]: WEBHOOK_DELIVERY.timeoutSeconds,
  [WEBHOOK_SWEEP.name]: WEBHOOK_SWEEP.timeoutSeconds,
  [DOMAIN_RECHECK.name]: DOMAIN_RECHECK.timeoutSeconds,
};
const signers = ROUTES.filter((r) => ('signs' in r && r.signs) || ('seals' in r && r.seals)).map((r) => r.name);
const pagers: string[] = ROUTES.filter((r) => 'pages' in r && r.pages).map((r) => r.name);

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Names a resource reference of a policy: `table`, `table/index/gsi1`, `stream`, `secret`, `queue:<id>`, or the raw JSON. */
const describeResource = (ref: unknown): string => {
  const text = JSON.stringify(ref);
  const tableArn = JSON.stringify({ 'Fn::GetAtt': [tableId, 'Arn'] });
  if (text === tableArn) return 'table';
  const index = new RegExp(`^\\{"Fn::Join":\\["",\\[${escapeRegExp(tableArn)},"/index/([\\w-]+)"\\]\\]\\}$`).exec(text);
  if (index) return `table/index/${index[1]}`;
  if (text === JSON.stringify({ 'Fn::GetAtt': [tableId, 'StreamArn'] })) return 'stream';
  if (text === JSON.stringify({ Ref: secretId })) return 'secret';
  // An SQS queue's Ref is its URL.
  const url = /^\{"Ref":"(\w+)"\}$/.exec(text);
  if (url && dataResources[url[1] as string]?.Type === 'AWS::SQS::Queue')
    return `queueUrl:${(url[1] as string).replace(/[0-9A-F]{8}$/, '')}`;
  const queue = /^\{"Fn::GetAtt":\["(\w+)","(Arn|QueueName)"\]\}$/.exec(text);
  if (queue && dataResources[queue[1] as string]?.Type === 'AWS::SQS::Queue') {
    return `${queue[2] === 'Arn' ? 'queue' : 'queueName'}:${(queue[1] as string).replace(/[0-9A-F]{8}$/, '')}`;
  }
  return text;
};
const resourcesOf = (statements: Statement[]): string[] =>
  [...new Set(statements.flatMap((s) => [s.Resource].flat().map(describeResource)))].sort();
/** PutItem on the table, only on the cursor key item's partition (lib/db/entities/cursor-key.ts). */
const isCursorKeyGrant = (s: Statement): boolean =>
  JSON.stringify(actionsOf(s)) === '["dynamodb:PutItem"]' &&
  JSON.stringify(resourcesOf([s])) === '["table"]' &&
  JSON.stringify(s.Condition) === JSON.stringify({ 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [cursorKeyPartitionKey()] } });

describe('two stacks', () => {
  it('keeps the state in RosterData, with termination protection, and the functions in Roster, which refers to it by export and by the stream parameter only', () => {
    expect(built.data.stackName).toBe('RosterData');
    expect(stack.stackName).toBe('Roster');
    expect(built.data.terminationProtection).toBe(true);
    expect(stack.dependencies).toContain(built.data);
    expect(built.data.dependencies).toEqual([]);
    const dataTypes = [...new Set(Object.values(dataResources).map((r) => r.Type))].sort();
    expect(dataTypes).toEqual([
      'AWS::DynamoDB::Table',
      'AWS::SQS::Queue',
      'AWS::SQS::QueuePolicy',
      'AWS::SSM::Parameter',
      'AWS::SecretsManager::Secret',
    ]);
    expect(
      dataOfType('AWS::SQS::Queue')
        .map(([id]) => id.replace(/[0-9A-F]{8}$/, ''))
        .sort(),
    ).toEqual([
      'CleanupQueue',
      'FanoutQueue',
      'MailDeadLetters',
      'MailEventsDeadLetters',
      'MailQueue',
      'StreamDeadLetters',
      'TeamCleanupDeadLetters',
      'WebhookDeadLetters',
      'WebhookFanoutDeadLetters',
      'WebhookQueue',
    ]);
    for (const type of ['AWS::DynamoDB::Table', 'AWS::SecretsManager::Secret', 'AWS::SQS::Queue', 'AWS::SES::EmailIdentity']) {
      expect(ofType(type), type).toEqual([]);
    }
  });

  it("exports only stable values, whatever the functions' stack imports: the table's name, ARN and stream ARN, the secret's ARN, the queues' ARNs and names, the URLs of the queues functions send to", () => {
    const exported = Object.values(dataJson.Outputs)
      .filter((o) => o.Export)
      .map((o) => describeResource(o.Value));
    const sentTo = ['WebhookQueue', 'MailQueue', 'CleanupQueue', 'FanoutQueue'];
    const queues = [
      ...sentTo,
      'StreamDeadLetters',
      'MailDeadLetters',
      'MailEventsDeadLetters',
      'TeamCleanupDeadLetters',
      'WebhookDeadLetters',
      'WebhookFanoutDeadLetters',
    ].flatMap((id) => [`queue:${id}`, `queueName:${id}`]);
    expect(exported.sort()).toEqual(
      [...queues, ...sentTo.map((id) => `queueUrl:${id}`), 'secret', 'stream', 'table', JSON.stringify({ Ref: tableId })].sort(),
    );
    // The functions' stack imports them (synth() fails on an import of anything else).
    expect(JSON.stringify(built.rawJson)).toContain('"Fn::ImportValue"');
  });
});

/** CloudFormation's limit of resources per stack; a nested stack is a stack of its own. */
const STACK_LIMIT = 500;
/** What a default deploy may use of it: the rest is for the options that add resources. */
const DEFAULT_CEILING = 470;
/** The routes the parent must still have room for (issue 14 adds about 11). */
const MORE_ROUTES = 15;
/** The routes each nested stack must still have room for. */
const MORE_ROUTES_PER_GROUP = 6;

/** The logical ids of `ids` a template value refers to: Ref, Fn::GetAtt and Fn::Sub's `${…}` (not parameters). */
const referencesIn = (value: unknown, ids: ReadonlySet<string>): string[] => {
  if (Array.isArray(value)) return value.flatMap((item) => referencesIn(item, ids));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, item]): string[] => {
    if (key === 'Ref' && typeof item === 'string') return ids.has(item) ? [item] : [];
    if (key === 'Fn::GetAtt' && Array.isArray(item)) return ids.has(item[0] as string) ? [item[0] as string] : [];
    if (key === 'Fn::Sub') {
      const [text, variables] = Array.isArray(item) ? item : [item, {}];
      const named = [...String(text).matchAll(/\$\{(\w+)[^}]*\}/g)].map((m) => m[1] as string).filter((id) => ids.has(id));
      return [...named, ...referencesIn(variables, ids)];
    }
    return referencesIn(item, ids);
  });
};

/** A chain of resources that need each other in a circle (CloudFormation refuses the template), or undefined. */
const cycleIn = (template: Record<string, Resource>): string[] | undefined => {
  const ids = new Set(Object.keys(template));
  const needs = new Map(
    Object.entries(template).map(([id, r]) => [id, [...new Set([...referencesIn(r, ids), ...(r.DependsOn ?? [])])]] as const),
  );
  const done = new Set<string>();
  const visit = (id: string, path: string[]): string[] | undefined => {
    if (path.includes(id)) return [...path.slice(path.indexOf(id)), id];
    if (done.has(id)) return undefined;
    for (const next of needs.get(id) ?? []) {
      const cycle = visit(next, [...path, id]);
      if (cycle) return cycle;
    }
    done.add(id);
    return undefined;
  };
  for (const id of ids) {
    const cycle = visit(id, []);
    if (cycle) return cycle;
  }
  return undefined;
};

describe('nested stacks (FUNCTION_STACKS)', () => {
  const configurations = [
    { name: 'defaults', built, ceiling: DEFAULT_CEILING, perFunction: 5, perGroup: 0 },
    { name: 'gradualDeploy=true', built: synth({ gradualDeploy: 'true' }), ceiling: STACK_LIMIT, perFunction: 7, perGroup: 1 },
    { name: 'reservedConcurrency=true', built: synth({ reservedConcurrency: 'true' }), ceiling: STACK_LIMIT, perFunction: 5, perGroup: 0 },
    {
      name: 'every option that adds resources',
      built: synth({
        gradualDeploy: 'true',
        reservedConcurrency: 'true',
        tracing: 'true',
        sesDomain: 'example.com',
        alarmEmail: 'ops@example.com',
      }),
      ceiling: STACK_LIMIT,
      perFunction: 7,
      perGroup: 1,
    },
  ];
  const [parent, ...nested] = built.templates;
  const typesOf = (json: { Resources: Record<string, Resource> }): string[] =>
    [...new Set(Object.values(json.Resources).map((r) => r.Type))].sort();

  it('keeps each API function, with its role, log group, version and alias, in the nested stack of its route group', () => {
    expect(parent?.stack).toBe(stack);
    expect(nested.map((t) => t.id).sort()).toEqual(Object.keys(FUNCTION_STACKS).sort());
    for (const name of allNames) {
      const fn = stack.endpoints.get(name) as Endpoint;
      const home = Stack.of(fn);
      expect(home.node.id, name).toBe(functionStackOf(name));
      expect(home.nestedStackParent, name).toBe(stack);
      expect(Stack.of(stack.aliases.get(name) as Alias), name).toBe(home);
      const own = built.templates.find((t) => t.stack === home)?.json.Resources ?? {};
      const props = (own[logicalId(name)] as Resource).Properties;
      expect(own, name).toHaveProperty((props.Role as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0]);
      expect(own, name).toHaveProperty((props.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref);
    }
    expect(
      [...new Set(routeNames.map(routeGroup))].filter(
        (g) =>
          !Object.values(FUNCTION_STACKS)
            .flat()
            .includes(g as never),
      ),
    ).toEqual([]);
    for (const { json } of nested) {
      expect(typesOf(json)).toEqual([
        'AWS::IAM::Role',
        'AWS::Lambda::Alias',
        'AWS::Lambda::Function',
        'AWS::Lambda::Version',
        'AWS::Logs::LogGroup',
      ]);
    }
  });

  it("keeps the HTTP API, its routes, integrations and invoke permissions, the background functions, topic and the service's alarms in Roster", () => {
    for (const name of backgroundNames) expect(Stack.of(stack.background.get(name) as Endpoint), name).toBe(stack);
    const parentTypes = typesOf(parent?.json as { Resources: Record<string, Resource> });
    for (const type of [
      'AWS::ApiGatewayV2::Api',
      'AWS::ApiGatewayV2::Stage',
      'AWS::ApiGatewayV2::Route',
      'AWS::ApiGatewayV2::Integration',
      'AWS::Lambda::Permission',
      'AWS::SNS::Topic',
      'AWS::CloudWatch::CompositeAlarm',
      'AWS::CloudWatch::Alarm',
      'AWS::CloudFormation::Stack',
    ]) {
      expect(parentTypes, type).toContain(type);
    }
    const parentFunctions = Object.entries(parent?.json.Resources ?? {}).filter(([, r]) => r.Type === 'AWS::Lambda::Function');
    expect(parentFunctions.map(([id]) => id).sort()).toEqual(backgroundNames.map(logicalId).sort());
  });

  it('refuses a route whose group has no nested stack, at synth, with one sentence', () => {
    expect(() => functionStackOf('unplaced-list')).toThrow(
      'unplaced-list: its route group unplaced has no nested stack: add it to FUNCTION_STACKS (infra/api-settings.ts)',
    );
    expect(functionStackOf('jwks')).toBe('Auth');
    expect(functionStackOf('my-invites-list')).toBe('Invites');
    expect(functionStackOf(FALLBACK)).toBe('Pages');
  });

  it.for(configurations)(
    "$name: every stack stays under CloudFormation's 500 resources, each API function 5 in its nested stack (7 with CodeDeploy and its rollback alarm, and one alarm per route group)",
    ({ built: b, ceiling, perFunction, perGroup }, { annotate }) => {
      const counts = b.templates.map(({ id, json: t }) => ({ id, count: Object.keys(t.Resources).length }));
      for (const { id, count } of counts) expect(count, id).toBeLessThanOrEqual(ceiling);
      for (const { id, stack: s, json: t } of b.templates.slice(1)) {
        const functions = [...b.stack.endpoints.values()].filter((fn) => Stack.of(fn) === s).length;
        const groups = new Set(
          [...b.stack.endpoints.keys()].filter((name) => Stack.of(b.stack.endpoints.get(name) as Endpoint) === s).map(routeGroup),
        ).size;
        expect(Object.keys(t.Resources).length, id).toBe(functions * perFunction + groups * perGroup);
        expect(Math.floor((STACK_LIMIT - functions * perFunction) / perFunction), id).toBeGreaterThanOrEqual(MORE_ROUTES_PER_GROUP);
      }
      void annotate(counts.map(({ id, count }) => `${id} ${count} (${STACK_LIMIT - count} to spare)`).join(', '));
    },
  );

  it.for(configurations)(
    `$name: Roster has room for ${MORE_ROUTES} more routes, at 3 resources each (route, integration, invoke permission)`,
    ({ built: b }, { annotate }) => {
      const own = Object.values(b.templates[0]?.json.Resources ?? {});
      const count = (type: string, principal?: string): number =>
        own.filter((r) => r.Type === type && (!principal || r.Properties.Principal === principal)).length;
      // One of each per route and for the fallback on $default: nothing else in Roster grows with the routes.
      const perRoute = ['AWS::ApiGatewayV2::Route', 'AWS::ApiGatewayV2::Integration'].map((type) => count(type));
      perRoute.push(count('AWS::Lambda::Permission', 'apigateway.amazonaws.com'));
      expect(perRoute).toEqual([ROUTES.length + 1, ROUTES.length + 1, ROUTES.length + 1]);
      const room = Math.floor((STACK_LIMIT - own.length) / perRoute.length);
      expect(room).toBeGreaterThanOrEqual(MORE_ROUTES);
      void annotate(`Roster ${own.length} resources: room for ${room} more routes`);
    },
  );

  it.for(configurations)('$name: no stack has resources that need each other in a circle', ({ built: b }) => {
    // The check itself finds one.
    const loop = { A: { Type: 'T', Properties: { P: { 'Fn::Sub': '${B.Arn}' } } }, B: { Type: 'T', Properties: {}, DependsOn: ['A'] } };
    expect(cycleIn(loop)).toEqual(['A', 'B', 'A']);
    for (const { id, json: t } of b.templates) expect(cycleIn(t.Resources), id).toBeUndefined();
  });

  it("passes the nested stacks the API's id (and CodeDeploy's application and role; the topic with functionAlarms) as parameters, and imports the data stack's values where they are used", () => {
    for (const { id, json: t } of nested) {
      expect(Object.keys(t.Parameters ?? {}).length, id).toBe(1);
      // The table and the secret come straight from RosterData's exports (synth() fails on any other import).
      expect(JSON.stringify(t.Resources), id).toContain('"Fn::ImportValue"');
    }
    const gradual = configurations[1]?.built as typeof built;
    // The rollback alarms are silent: no topic to pass.
    for (const { id, json: t } of gradual.templates.slice(1)) expect(Object.keys(t.Parameters ?? {}).length, id).toBe(3);
    const paging = synth({ functionAlarms: 'true' });
    for (const { id, json: t } of paging.templates.slice(1)) expect(Object.keys(t.Parameters ?? {}).length, id).toBe(2);
    const [topicId] = paging.ofType('AWS::SNS::Topic').find(([id]) => id.startsWith('MonitoringTopic')) as [string, Resource];
    const named = (alarmName: string) => paging.ofType('AWS::CloudWatch::Alarm').find(([, a]) => a.Properties.AlarmName === alarmName)?.[1];
    for (const name of allNames) {
      const alarmName = `${STACK_ID}-${functionStackOf(name)}-${name}-health`;
      expect(named(alarmName)?.Properties, alarmName).toMatchObject({ AlarmActions: [{ Ref: topicId }], OKActions: [{ Ref: topicId }] });
      expect(named(`${STACK_ID}-${functionStackOf(name)}-${routeGroup(name)}-5xx`), name).toBeDefined();
    }
    // The background functions' alarms are named in Roster.
    for (const name of backgroundNames) expect(named(`${STACK_ID}-${name}-health`), name).toBeDefined();
  });

  it('shows every API function on the dashboard in Roster, with -c dashboard=true (their names come out of the nested stacks)', () => {
    expect(ofType('AWS::CloudWatch::Dashboard')).toEqual([]);
    const shown = synth({ dashboard: 'true' });
    const [, dashboard] = shown.only('AWS::CloudWatch::Dashboard');
    const body = JSON.stringify(dashboard.Properties.DashboardBody);
    for (const name of allNames) expect(body, name).toContain(JSON.stringify({ Ref: shown.logicalId(name) }));
  });

  it('bundles the nested stacks whenever Roster is bundled, as with `cdk deploy Roster --exclusively`', () => {
    // The CLI passes the stacks it deploys as the bundling pattern, which a nested stack's own path would not match.
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [STACK_ID] } });
    const alone = new Stack(app, STACK_ID);
    expect(new NestedStack(alone, 'Auth').bundlingRequired).toBe(true);
    expect(new NestedStack(new Stack(app, 'Other'), 'Auth').bundlingRequired).toBe(false);
  });
});

describe('functions', () => {
  it('has one function per route plus the fallback, the background functions, and no other of ours', () => {
    expect(stack.endpoints.size).toBe(ROUTES.length + 1);
    expect([...stack.endpoints.keys()].sort()).toEqual([...allNames].sort());
    // CDK may add helper functions (log retention, custom resources); none of them is an endpoint.
    const ours = ofType('AWS::Lambda::Function')
      .map(([id]) => id)
      .filter((id) => !/^(LogRetention|CustomResource|AWS[0-9a-f]{32})/.test(id));
    expect(ours.sort()).toEqual(everyFunction.map(logicalId).sort());
  });

  it.each(everyFunction)(
    "%s: Node 24 on arm64, the default limits, JSON logs (INFO, Lambda's own from WARN) to a log group with retention, no tracing",
    (name) => {
      const props = functionOf(name).Properties;
      expect(props.Runtime).toBe('nodejs24.x');
      expect(props.Architectures).toEqual(['arm64']);
      expect(props.MemorySize).toBe(FUNCTION_DEFAULTS.memoryMb);
      // The background functions' timeouts fit their time budgets (their own blocks below).
      if (name in ownTimeouts) {
        expect(props.Timeout).toBe(ownTimeouts[name]);
      } else {
        expect(props.Timeout).toBe(FUNCTION_DEFAULTS.timeoutSeconds);
        expect(props.Timeout).toBeLessThan(29); // API Gateway's integration timeout
      }
      const logging = props.LoggingConfig as {
        LogFormat: string;
        LogGroup: { Ref: string };
        ApplicationLogLevel: string;
        SystemLogLevel: string;
      };
      expect(logging).toMatchObject({ LogFormat: 'JSON', ApplicationLogLevel: 'INFO', SystemLogLevel: 'WARN' });
      expect((resources[logging.LogGroup.Ref] as Resource).Properties.RetentionInDays).toBeGreaterThan(0);
      expect(props).not.toHaveProperty('TracingConfig');
    },
  );

  it('has no function URL; only this API may invoke the API functions (their live alias), each sweeper its schedule, the rotation function Secrets Manager for this secret', () => {
    expect(ofType('AWS::Lambda::Url')).toEqual([]);
    const apiId = only('AWS::ApiGatewayV2::Api')[0];
    const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
    const permissions = ofType('AWS::Lambda::Permission').map(([, p]) => p.Properties);
    const rotation = { 'Fn::GetAtt': [logicalId(KEY_ROTATION), 'Arn'] };
    const [forRotation, ...more] = permissions.filter((p) => same(p.FunctionName, rotation));
    expect(more).toEqual([]);
    expect(forRotation).toMatchObject({
      Action: 'lambda:InvokeFunction',
      Principal: 'secretsmanager.amazonaws.com',
      SourceArn: { Ref: secretId },
      SourceAccount: { Ref: 'AWS::AccountId' },
    });
    const forSweepers = [INVITE_SWEEP.name, OUTBOX_SWEEP.name, CLEANUP_SWEEP.name, WEBHOOK_SWEEP.name, DOMAIN_RECHECK.name].map((name) => {
      const target = { 'Fn::GetAtt': [logicalId(name), 'Arn'] };
      const [permission, ...others] = permissions.filter((p) => same(p.FunctionName, target));
      expect(others).toEqual([]);
      const rule = ofType('AWS::Events::Rule').find(([, r]) => same((r.Properties.Targets as { Arn: unknown }[])[0]?.Arn, target));
      expect(permission).toMatchObject({
        Action: 'lambda:InvokeFunction',
        Principal: 'events.amazonaws.com',
        SourceArn: { 'Fn::GetAtt': [rule?.[0], 'Arn'] },
      });
      return permission;
    });
    for (const permission of permissions.filter((p) => p !== forRotation && !forSweepers.includes(p))) {
      expect(permission.Principal).toBe('apigateway.amazonaws.com');
      expect(JSON.stringify(permission.SourceArn)).toContain(JSON.stringify({ Ref: apiId }));
      const target = resources[(permission.FunctionName as { Ref: string }).Ref] as Resource;
      expect(target.Type).toBe('AWS::Lambda::Alias');
      expect(target.Properties.Name).toBe(LIVE_ALIAS);
    }
  });

  it('reserves no concurrency by default: the deploy must succeed on an account whose quota is 10', () => {
    for (const [id, fn] of ofType('AWS::Lambda::Function')) expect(fn.Properties, id).not.toHaveProperty('ReservedConcurrentExecutions');
  });

  it("reserves the route table's concurrency when the deploy opts in (-c reservedConcurrency=true)", () => {
    const optedResources = synth({ reservedConcurrency: 'true' }).resources;
    // The same construct tree, so the same logical ids as the default stack's.
    const reservedOf = (name: string): unknown => optedResources[logicalId(name)]?.Properties.ReservedConcurrentExecutions;
    for (const route of ROUTES)
      expect(reservedOf(route.name), route.name).toBe('reservedConcurrency' in route ? route.reservedConcurrency : undefined);
    for (const name of ['auth-signin', 'auth-signup', 'auth-refresh']) expect(reservedOf(name), name).toBeGreaterThan(0);
    expect(reservedOf(FALLBACK)).toBeUndefined();
  });
});

describe('environment and secret', () => {
  it.each(routeNames)('%s gets the table name if it reads the table, and the secret ARN (never a value) only if it signs', (name) => {
    const env = variables(name);
    if (ROUTES.find((r) => r.name === name)?.actions.length) expect(env.TABLE_NAME).toEqual({ Ref: tableId });
    else expect(env).not.toHaveProperty('TABLE_NAME');
    // A Ref to a secret is its ARN; a {{resolve:secretsmanager:...}} reference would inline the value.
    if (signers.includes(name)) expect(env.SIGNING_KEY_SECRET_ARN).toEqual({ Ref: secretId });
    else expect(env).not.toHaveProperty('SIGNING_KEY_SECRET_ARN');
    // Source maps stay unloaded: parsing one costs every cold start (infra/endpoint.ts).
    expect(env).not.toHaveProperty('NODE_OPTIONS');
    // The tokens' issuer is the API's own URL: the signers put it in `iss`, the verifiers check it.
    expect(env.TOKEN_ISSUER).toEqual(json.Outputs.TokenIssuer?.Value);
  });

  it("names the API's URL as the tokens' issuer, or -c issuer", () => {
    const apiId = only('AWS::ApiGatewayV2::Api')[0];
    expect(json.Outputs.TokenIssuer?.Value).toEqual({
      'Fn::Join': ['', ['https://', { Ref: apiId }, '.execute-api.', { Ref: 'AWS::Region' }, '.', { Ref: 'AWS::URLSuffix' }]],
    });
    const custom = synth({ issuer: 'https://auth.example.com/' });
    for (const route of ROUTES)
      expect(custom.resources[logicalId(route.name)]?.Properties.Environment, route.name).toMatchObject({
        Variables: { TOKEN_ISSUER: 'https://auth.example.com' },
      });
    expect(() => synth({ issuer: 'http://auth.example.com' })).toThrow(/context issuer must be an absolute https URL/);
  });

  it('reads the private keys in the functions that sign (sign-up, sign-in, refresh, reset, step-up and GoTrue twins) or seal factors only', () => {
    expect([...signers].sort()).toEqual([
      'auth-factors-enrol',
      'auth-factors-verify',
      'auth-oauth-token',
      'auth-passkeys-sign-in',
      'auth-recovery-codes-verify',
      'auth-refresh',
      'auth-reset',
      'auth-signin',
      'auth-signup',
      'gotrue-factors-enrol',
      'gotrue-factors-verify',
      'gotrue-signup',
      'gotrue-token',
      'gotrue-verify',
      'page-security-action',
    ]);
  });

  it('gives the fallback neither the table nor the key, and the rotation function the table only', () => {
    expect(variables(FALLBACK)).toEqual({});
    expect(variables(KEY_ROTATION)).toEqual({ TABLE_NAME: { Ref: tableId } });
  });

  it.each(everyFunction)('%s: no local setting and nothing that looks like key material', (name) => {
    const env = variables(name);
    for (const local of ['DYNAMODB_ENDPOINT', 'DATA_DIR', 'AWS_ENDPOINT_URL']) expect(env).not.toHaveProperty(local);
    for (const value of Object.values(env).filter((v): v is string => typeof v === 'string')) {
      expect(value).not.toMatch(/-----BEGIN|"kty"|^[A-Za-z0-9+/_=-]{32,}$/);
    }
  });

  it('starts the secret as an empty keyset: no key material, no literal value anywhere in the template', () => {
    expect(secret.Properties).not.toHaveProperty('SecretString');
    expect(secret.Properties.GenerateSecretString).toMatchObject({
      SecretStringTemplate: JSON.stringify({ keys: [] }),
      GenerateStringKey: 'bootstrap',
    });
    const text = JSON.stringify([dataJson, json]);
    expect(text.includes('"SecretString"'), 'a literal SecretString').toBe(false);
    expect(text.includes('resolve:secretsmanager'), 'a dynamic reference to a secret value').toBe(false);
    expect(text).not.toMatch(/"d"\s*:|PRIVATE KEY/);
  });

  it('rotates the keys on a schedule beside the function, and at once when the schedule is created (G9, SMG4)', () => {
    const [scheduleId, schedule] = only('AWS::SecretsManager::RotationSchedule');
    expect(schedule.Properties).toEqual({
      SecretId: { Ref: secretId },
      RotationLambdaARN: { 'Fn::GetAtt': [logicalId(KEY_ROTATION), 'Arn'] },
      RotationRules: { ScheduleExpression: `rate(${KEY_ROTATION_DAYS} days)` },
      RotateImmediatelyOnUpdate: true,
    });
    // Secrets Manager invokes the function as soon as the schedule exists: permission and role (its
    // policies inline) first.
    const [permissionId] = ofType('AWS::Lambda::Permission').find(([, p]) => p.Properties.Principal === 'secretsmanager.amazonaws.com') as [
      string,
      Resource,
    ];
    const roleId = (functionOf(KEY_ROTATION).Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    expect(schedule.DependsOn).toEqual(expect.arrayContaining([logicalId(KEY_ROTATION), permissionId, roleId]));
    expect(scheduleId).toBeTruthy();
  });

  it('lets exactly the signing functions read the key, with GetSecretValue only', () => {
    const readers = everyFunction.filter((name) => statementsOf(name).some((s) => resourcesOf([s]).includes('secret')));
    expect(readers.sort()).toEqual([...signers, KEY_ROTATION].sort());
    for (const name of signers) {
      const onSecret = statementsOf(name).filter((s) => resourcesOf([s]).includes('secret'));
      expect(onSecret.flatMap(actionsOf)).toEqual(['secretsmanager:GetSecretValue']);
      expect(resourcesOf(onSecret)).toEqual(['secret']);
    }
  });

  it('lets the rotation function rotate this secret and write the public keys item, and nothing else', () => {
    const statements = statementsOf(KEY_ROTATION);
    const onSecret = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('secretsmanager:')));
    expect(onSecret.flatMap(actionsOf).sort()).toEqual([
      'secretsmanager:DescribeSecret',
      'secretsmanager:GetSecretValue',
      'secretsmanager:PutSecretValue',
      'secretsmanager:UpdateSecretVersionStage',
    ]);
    expect(resourcesOf(onSecret)).toEqual(['secret']);
    const dynamo = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('dynamodb:')));
    expect(dynamo.flatMap(actionsOf).sort()).toEqual(['dynamodb:GetItem', 'dynamodb:PutItem']);
    expect(resourcesOf(dynamo)).toEqual(['table']);
    // Only the public keys item's partition: every dynamo statement carries the condition.
    for (const statement of dynamo) {
      expect(statement.Condition).toEqual({ 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [signingKeysPartitionKey()] } });
    }
  });

  it('scopes the rotation function to the partition key ElectroDB gives the signingKeys item', () => {
    // What the entity writes (test/api/keys.test.ts checks the stored item against it too).
    const { Item } = signingKeys()
      .put({ ...SIGNING_KEYS_ITEM, keys: [], updatedAt: '2026-01-01T00:00:00.000Z' })
      .params<{ Item: Record<string, unknown> }>({ table: 'any' });
    expect(signingKeysPartitionKey()).toBe(Item[KEYS.pk]);
    expect(signingKeysPartitionKey()).toBe('$roster#purpose_access-token');
    // No wildcard or other partition: the policy names exactly this one value.
    const text = JSON.stringify(statementsOf(KEY_ROTATION).filter((s) => s.Condition));
    expect(text).not.toMatch(/StringLike|\*/);
  });

  it("scopes no other function by partition: their routes span many (a list's cursor key grant aside)", () => {
    for (const name of allNames) {
      const scoped = statementsOf(name).filter((s) => s.Condition);
      expect(
        scoped.filter((s) => !(pagers.includes(name) && isCursorKeyGrant(s))),
        name,
      ).toEqual([]);
    }
  });

  it.each(pagers)('%s: may create the cursor key item, a PutItem on its partition only', (name) => {
    const scoped = statementsOf(name).filter((s) => s.Condition);
    expect(scoped).toHaveLength(1);
    expect(isCursorKeyGrant(scoped[0] as Statement)).toBe(true);
    // The value the entity writes, with no wildcard.
    const { Item } = cursorKey()
      .put({ ...CURSOR_KEY_ITEM, key: 'k' })
      .params<{ Item: Record<string, unknown> }>({ table: 'any' });
    expect(cursorKeyPartitionKey()).toBe(Item[KEYS.pk]);
    expect(JSON.stringify(scoped)).not.toMatch(/StringLike|\*/);
  });
});

describe('least privilege (K1)', () => {
  it.each(ROUTES.map((r) => [r.name, r] as const))('%s: exactly its route actions, on the table and its indexes', (name, route) => {
    const statements = statementsOf(name);
    // A list's PutItem on the cursor key partition is checked on its own (partition scoping, above).
    const dynamo = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('dynamodb:')) && !isCursorKeyGrant(s));
    expect(dynamo.flatMap(actionsOf).sort()).toEqual(route.actions.map((a) => `dynamodb:${a}`).sort());
    // The documentation routes read no table, so they get no statement at all.
    if (route.actions.length) expect(resourcesOf(dynamo)).toEqual(['table', ...route.indexes.map((i) => `table/index/${i}`)].sort());
    else expect(dynamo).toEqual([]);
  });

  it('gives the fallback no DynamoDB access', () => {
    expect(
      statementsOf(FALLBACK)
        .flatMap(actionsOf)
        .filter((a) => a.startsWith('dynamodb:')),
    ).toEqual([]);
  });

  it.each(everyFunction)('%s: logs only to its own log group, and no other service', (name) => {
    const statements = statementsOf(name);
    const logs = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('logs:')));
    expect(logs.flatMap(actionsOf).sort()).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents']);
    const logGroup = (functionOf(name).Properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;
    expect(logs.map((s) => s.Resource)).toEqual([{ 'Fn::GetAtt': [logGroup, 'Arn'] }]);
    const services = new Set(statements.flatMap(actionsOf).map((a) => a.split(':')[0]));
    // The stream's reader feeds the work queues and its dead letters, the work functions set their messages' visibility, the webhook functions (and the replay
    // route) the webhook queue; with the log transport nothing may use SES (mail.test.ts: with SES,
    // the mailer and the outbox sweeper may).
    const queued = [
      STREAM_DISPATCH.name,
      MAILER.name,
      TEAM_CLEANUP.name,
      WEBHOOK_FANOUT.name,
      WEBHOOK_DELIVERY.name,
      WEBHOOK_SWEEP.name,
      'webhooks-replay',
    ];
    const allowed = queued.includes(name) ? ['dynamodb', 'logs', 'sqs'] : ['dynamodb', 'logs', 'secretsmanager'];
    expect([...services].every((s) => allowed.includes(s as string))).toBe(true);
  });

  it('allows no wildcard action or resource in any policy', () => {
    const statements = allStatements();
    expect(ofType('AWS::IAM::Policy')).toEqual([]);
    expect(statements.length).toBeGreaterThanOrEqual(everyFunction.length);
    for (const statement of statements) {
      expect(statement.Effect).toBe('Allow');
      for (const action of actionsOf(statement)) expect(action).not.toContain('*');
      // The one exception: dynamodb:ListStreams, which the mailer's stream mapping needs, takes no narrower resource.
      if (actionsOf(statement).includes('dynamodb:ListStreams')) {
        expect(actionsOf(statement)).toEqual(['dynamodb:ListStreams']);
        continue;
      }
      expect(JSON.stringify(statement.Resource)).not.toContain('*');
    }
  });
});

describe('table (K2)', () => {
  const input = createTableInput('unused');

  it('has the keys and indexes of lib/db/entities/table.ts', () => {
    expect(table.Properties.KeySchema).toEqual(input.KeySchema);
    expect(table.Properties.AttributeDefinitions).toEqual(expect.arrayContaining(input.AttributeDefinitions));
    expect(table.Properties.AttributeDefinitions).toHaveLength(input.AttributeDefinitions.length);
    expect(table.Properties.GlobalSecondaryIndexes).toEqual(input.GlobalSecondaryIndexes);
  });

  it('is on demand, with PITR, deletion protection, retention, TTL, encryption and the outbox stream', () => {
    expect(table.Properties.BillingMode).toBe('PAY_PER_REQUEST');
    expect(table.Properties.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    expect(table.Properties.DeletionProtectionEnabled).toBe(true);
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.UpdateReplacePolicy).toBe('Retain');
    expect(table.Properties.TimeToLiveSpecification).toEqual({ AttributeName: TTL_ATTRIBUTE, Enabled: true });
    expect(table.Properties.SSESpecification).toEqual({ SSEEnabled: true });
    expect(table.Properties.StreamSpecification).toEqual({ StreamViewType: createTableInput('x').StreamSpecification.StreamViewType });
  });
});

/** The event-source mapping that invokes the function `name`. */
const mappingOf = (name: string): Resource => {
  const found = ofType('AWS::Lambda::EventSourceMapping').filter(
    ([, m]) => JSON.stringify(m.Properties.FunctionName) === JSON.stringify({ Ref: logicalId(name) }),
  );
  expect(found).toHaveLength(1);
  return (found[0] as [string, Resource])[1];
};
const queueId = (id: string) => Object.keys(dataResources).find((key) => key.replace(/[0-9A-F]{8}$/, '') === id) as string;
/** The functions' stack's parameters, CloudFormation's SSM-filled one among them (infra/data-stack.ts streamArnParameter). */
const functionParameters = (): Record<string, { Type?: string; Default?: string }> =>
  (Template.fromStack(stack).toJSON() as { Parameters?: Record<string, { Type?: string; Default?: string }> }).Parameters ?? {};
const streamParameter = (): string => {
  const ids = Object.entries(functionParameters())
    .filter(([, p]) => p.Default === '/RosterData/table-stream-arn')
    .map(([id]) => id);
  expect(ids).toHaveLength(1);
  return ids[0] as string;
};
const onStream = (m: Resource) => JSON.stringify(m.Properties.EventSourceArn) === JSON.stringify({ Ref: streamParameter() });
/** What a function that receives from a queue may call on it (CDK's SqsEventSource grant). */
const RECEIVE = ['sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage'];
const SEND = ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'];
const STREAM_READ = ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:ListStreams'];
const sqsOf = (name: string) => ({
  actions: statementsOf(name)
    .flatMap(actionsOf)
    .filter((a) => a.startsWith('sqs:'))
    .sort(),
  resources: resourcesOf(statementsOf(name).filter((st) => actionsOf(st).some((a) => a.startsWith('sqs:')))),
});
const WORK_QUEUE_IDS = { mailer: 'MailQueue', 'team-cleanup': 'CleanupQueue', 'webhook-fanout': 'FanoutQueue' } as const;
const DEAD_LETTER_IDS = {
  mailer: 'MailDeadLetters',
  'team-cleanup': 'TeamCleanupDeadLetters',
  'webhook-fanout': 'WebhookFanoutDeadLetters',
} as const;

describe("the table stream's one reader", () => {
  const mapping = mappingOf(STREAM_DISPATCH.name);

  it('is the only function on the stream: one event-source mapping, so no shard has a second reader', () => {
    expect(ofType('AWS::Lambda::EventSourceMapping').filter(([, m]) => onStream(m))).toHaveLength(1);
    expect(onStream(mapping)).toBe(true);
    // Every other mapping reads a queue.
    expect(
      ofType('AWS::Lambda::EventSourceMapping').filter(
        ([, m]) => !onStream(m) && !JSON.stringify(m.Properties.EventSourceArn).includes('Queue'),
      ),
    ).toEqual([]);
  });

  it("reads the stream's ARN from the data stack's SSM parameter when it deploys, not from an export (which could not change)", () => {
    const [[, parameter]] = dataOfType('AWS::SSM::Parameter') as [[string, Resource]];
    expect(parameter.Properties).toMatchObject({
      Name: '/RosterData/table-stream-arn',
      Type: 'String',
      Value: { 'Fn::GetAtt': [tableId, 'StreamArn'] },
    });
    expect(functionParameters()[streamParameter()]).toEqual({
      Type: 'AWS::SSM::Parameter::Value<String>',
      Default: '/RosterData/table-stream-arn',
    });
    expect(JSON.stringify(built.rawJson)).not.toMatch(/ImportValue":"RosterData:ExportsOutputFnGetAttTable[0-9A-F]+StreamArn/);
  });

  it('is invoked only for the records that start work, retried with bisection while the stream keeps them, then its dead letters', () => {
    expect(mapping.Properties).toMatchObject({
      BatchSize: STREAM_DISPATCH.batchSize,
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: STREAM_DISPATCH.retryAttempts,
      MaximumRecordAgeInSeconds: STREAM_DISPATCH.maxRecordAgeHours * 3600,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      StartingPosition: 'TRIM_HORIZON',
    });
    expect(JSON.stringify(mapping.Properties.DestinationConfig)).toContain('StreamDeadLetters');
    const patterns = (mapping.Properties.FilterCriteria as { Filters: { Pattern: string }[] }).Filters.map(
      (f) => JSON.parse(f.Pattern) as unknown,
    );
    expect(patterns).toEqual([
      { eventName: ['INSERT'], dynamodb: { NewImage: { __edb_e__: { S: ['outboxMessage'] } } } },
      { eventName: ['INSERT', 'MODIFY'], dynamodb: { NewImage: { __edb_e__: { S: ['teamCleanup'] } } } },
      { eventName: ['INSERT'], dynamodb: { NewImage: { __edb_e__: { S: ['auditEntry'] } } } },
    ]);
  });

  it('reads the stream and sends to the work queues and its dead letters: no table access', () => {
    const actions = statementsOf(STREAM_DISPATCH.name)
      .flatMap(actionsOf)
      .filter((a) => !a.startsWith('logs:'));
    expect(actions.filter((a) => a.startsWith('dynamodb:')).sort()).toEqual(STREAM_READ);
    expect(sqsOf(STREAM_DISPATCH.name).resources).toEqual([
      'queue:CleanupQueue',
      'queue:FanoutQueue',
      'queue:MailQueue',
      'queue:StreamDeadLetters',
    ]);
    expect(new Set(sqsOf(STREAM_DISPATCH.name).actions)).toEqual(new Set(SEND));
    expect(variables(STREAM_DISPATCH.name)).toEqual({
      MAIL_QUEUE_URL: { Ref: queueId('MailQueue') },
      CLEANUP_QUEUE_URL: { Ref: queueId('CleanupQueue') },
      FANOUT_QUEUE_URL: { Ref: queueId('FanoutQueue') },
    });
  });
});

describe('the work queues', () => {
  it.each(Object.keys(WORK_QUEUES) as (keyof typeof WORK_QUEUES)[])(
    '%s: its queue hides a message six timeouts, keeps it 4 days, moves it to its dead letters after its last receive; its function receives it at its batch size and concurrency, and may not read the stream',
    (name) => {
      const { fn, maxReceives } = WORK_QUEUES[name];
      expect(dataResources[queueId(WORK_QUEUE_IDS[name])]?.Properties).toMatchObject({
        VisibilityTimeout: workVisibilitySeconds(fn),
        MessageRetentionPeriod: 4 * 86_400,
        SqsManagedSseEnabled: true,
        RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [queueId(DEAD_LETTER_IDS[name]), 'Arn'] }, maxReceiveCount: maxReceives },
      });
      const mapping = mappingOf(fn.name);
      expect(JSON.stringify(mapping.Properties.EventSourceArn)).toContain(WORK_QUEUE_IDS[name]);
      expect(mapping.Properties).toMatchObject({
        BatchSize: fn.batchSize,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        ScalingConfig: { MaximumConcurrency: fn.maxConcurrency },
      });
      const actions = statementsOf(fn.name).flatMap(actionsOf);
      expect(actions.filter((a) => STREAM_READ.includes(a))).toEqual([]);
      // It may requeue to its own queue (lib/events/queued-records.ts).
      expect(resourcesOf(statementsOf(fn.name).filter((st) => actionsOf(st).includes('sqs:SendMessage')))).toContain(
        `queue:${WORK_QUEUE_IDS[name]}`,
      );
      expect(resourcesOf(statementsOf(fn.name).filter((st) => actionsOf(st).includes('sqs:ReceiveMessage')))).toEqual([
        `queue:${WORK_QUEUE_IDS[name]}`,
      ]);
      expect(variables(fn.name)).toMatchObject({
        [`${WORK_QUEUES[name].queue.toUpperCase()}_QUEUE_URL`]: { Ref: queueId(WORK_QUEUE_IDS[name]) },
      });
    },
  );
});

describe('mailer (outbox)', () => {
  it('may read and update the table, receive from its queue and send to it (a requeue); with the log transport, no SES', () => {
    const statements = statementsOf(MAILER.name);
    const actions = statements
      .flatMap(actionsOf)
      .filter((a) => !a.startsWith('logs:'))
      .sort();
    expect(actions).toEqual([...MAILER.actions.map((a) => `dynamodb:${a}`), ...RECEIVE, ...SEND].sort());
    expect(variables(MAILER.name)).toEqual({
      TABLE_NAME: { Ref: tableId },
      MAIL_QUEUE_URL: { Ref: queueId('MailQueue') },
      MAIL_TRANSPORT: 'log',
      PUBLIC_URL: json.Outputs.ApiUrl?.Value,
    });
  });
});

describe('team cleanup', () => {
  it("has a timeout that leaves its time budget a reserve, beyond the API functions' 29 s", () => {
    const timeout = functionOf(TEAM_CLEANUP.name).Properties.Timeout as number;
    expect(timeout).toBe(TEAM_CLEANUP.timeoutSeconds);
    expect(timeout * 1000).toBeGreaterThanOrEqual(4 * RESERVE_MS);
  });

  it('may use exactly its actions on the table and gsi1, receive from its queue and send to it (a requeue), nothing else', () => {
    const statements = statementsOf(TEAM_CLEANUP.name);
    const actions = statements
      .flatMap(actionsOf)
      .filter((a) => !a.startsWith('logs:'))
      .sort();
    expect(actions).toEqual([...TEAM_CLEANUP.actions.map((a) => `dynamodb:${a}`), ...RECEIVE, ...SEND].sort());
    const onTable = statements.filter((s) => actionsOf(s).includes('dynamodb:BatchWriteItem'));
    expect(resourcesOf(onTable)).toEqual(['table', 'table/index/gsi1']);
    expect(variables(TEAM_CLEANUP.name)).toEqual({ TABLE_NAME: { Ref: tableId }, CLEANUP_QUEUE_URL: { Ref: queueId('CleanupQueue') } });
  });

  it('is swept every 5 minutes by a function that may only Query gsi3 and update the table', () => {
    const actions = statementsOf(CLEANUP_SWEEP.name)
      .flatMap(actionsOf)
      .filter((a) => !a.startsWith('logs:'))
      .sort();
    expect(actions).toEqual(CLEANUP_SWEEP.actions.map((a) => `dynamodb:${a}`).sort());
    const rules = ofType('AWS::Events::Rule').filter(([, r]) =>
      JSON.stringify(r.Properties.Targets).includes(logicalId(CLEANUP_SWEEP.name)),
    );
    expect(rules.map(([, r]) => r.Properties.ScheduleExpression)).toEqual([`rate(${CLEANUP_SWEEP.everyMinutes} minutes)`]);
  });
});

describe('webhooks', () => {
  const webhookQueue = queueId('WebhookQueue');

  it('keeps messages 4 days, hidden 180 s while an attempt runs, and moves one to its dead letters after the 8th receive', () => {
    expect(dataResources[webhookQueue]?.Properties).toMatchObject({
      MessageRetentionPeriod: WEBHOOK_DELIVERY.retentionDays * 86_400,
      VisibilityTimeout: WEBHOOK_DELIVERY.visibilitySeconds,
      SqsManagedSseEnabled: true,
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [queueId('WebhookDeadLetters'), 'Arn'] }, maxReceiveCount: WEBHOOK_ATTEMPTS },
    });
    // Lambda needs the queue's visibility timeout to be at least the function's.
    expect(WEBHOOK_DELIVERY.visibilitySeconds).toBeGreaterThanOrEqual(6 * WEBHOOK_DELIVERY.timeoutSeconds);
  });

  it('delivers 10 messages an invocation, reports each failed one, and runs at most 2 invocations at once', () => {
    const mapping = mappingOf(WEBHOOK_DELIVERY.name);
    expect(mapping.Properties).toMatchObject({
      BatchSize: WEBHOOK_DELIVERY.batchSize,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: WEBHOOK_DELIVERY.maxConcurrency },
    });
    expect(JSON.stringify(mapping.Properties.EventSourceArn)).toContain('WebhookQueue');
  });

  it('grants each its table actions and exactly its queue calls', () => {
    expect(sqsOf(WEBHOOK_FANOUT.name)).toEqual({
      actions: [...RECEIVE, ...SEND, ...SEND].sort(),
      resources: ['queue:FanoutQueue', 'queue:WebhookQueue'],
    });
    expect(sqsOf('webhooks-replay')).toEqual({ actions: SEND, resources: ['queue:WebhookQueue'] });
    expect(sqsOf(WEBHOOK_DELIVERY.name)).toEqual({ actions: RECEIVE, resources: ['queue:WebhookQueue'] });
    for (const fn of [WEBHOOK_FANOUT, WEBHOOK_DELIVERY]) {
      const table = statementsOf(fn.name)
        .flatMap(actionsOf)
        .filter((a) => a.startsWith('dynamodb:'));
      expect(table.sort()).toEqual(fn.actions.map((a) => `dynamodb:${a}`).sort());
      expect(variables(fn.name)).toMatchObject({ TABLE_NAME: { Ref: tableId }, WEBHOOK_QUEUE_URL: { Ref: webhookQueue } });
    }
    expect(variables('webhooks-replay')).toMatchObject({ WEBHOOK_QUEUE_URL: { Ref: webhookQueue } });
  });

  it('touches only the webhook partitions of the table: never users, sessions, keys or claims', () => {
    const onTable = (name: string) =>
      statementsOf(name)
        .filter((st) => actionsOf(st).some((a) => ['dynamodb:Query', 'dynamodb:BatchGetItem', 'dynamodb:PutItem'].includes(a)))
        .map((st) => ({ actions: actionsOf(st), resources: resourcesOf([st]), condition: st.Condition }));
    const like = (patterns: string[]) => ({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': patterns } });
    expect(onTable(WEBHOOK_FANOUT.name)).toEqual([
      { actions: ['dynamodb:Query'], resources: ['table'], condition: like(['$roster#webhookteamid_*']) },
      { actions: ['dynamodb:BatchGetItem', 'dynamodb:BatchWriteItem'], resources: ['table'], condition: like(['$roster#webhookfanout_*']) },
    ]);
    expect(onTable(WEBHOOK_DELIVERY.name)).toEqual([
      {
        actions: ['dynamodb:BatchGetItem'],
        resources: ['table'],
        condition: like(['$roster#webhookteamid_*', '$roster#auditteamid_*', '$roster#teamid_*']),
      },
      { actions: ['dynamodb:PutItem'], resources: ['table'], condition: like(['$roster#webhookdeliveries_*#endpointid_*']) },
    ]);
    // Each pattern is the entity's own key with its ids as `*`.
    expect(Object.values(WEBHOOK_PARTITIONS)).toEqual([
      '$roster#webhookteamid_*',
      '$roster#auditteamid_*',
      '$roster#teamid_*',
      '$roster#webhookdeliveries_*#endpointid_*',
      '$roster#webhookfanout_*',
      '$roster#sweep_webhooks',
    ]);
  });

  it('is swept every hour by a function that reads only gsi3 and the webhook partitions, and may send to the webhook queue', () => {
    const table = statementsOf(WEBHOOK_SWEEP.name).filter((st) => actionsOf(st).some((a) => a.startsWith('dynamodb:')));
    const like = (patterns: string[]) => ({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': patterns } });
    expect(table.map((st) => ({ actions: actionsOf(st), resources: resourcesOf([st]), condition: st.Condition }))).toEqual([
      {
        actions: ['dynamodb:Query'],
        resources: ['table'],
        condition: like(['$roster#webhookteamid_*', '$roster#auditteamid_*', '$roster#webhookfanout_*']),
      },
      { actions: ['dynamodb:BatchGetItem', 'dynamodb:BatchWriteItem'], resources: ['table'], condition: like(['$roster#webhookfanout_*']) },
      { actions: ['dynamodb:GetItem', 'dynamodb:PutItem'], resources: ['table'], condition: like(['$roster#sweep_webhooks']) },
      // The watermark: its attributes only, nothing read back (the partition also holds the endpoints' secrets).
      {
        actions: ['dynamodb:UpdateItem'],
        resources: ['table'],
        condition: {
          ...like(['$roster#webhookteamid_*']),
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...WEBHOOK_SWEEP_ATTRIBUTES.watermark] },
          StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
        },
      },
      // gsi3, not the table, and only the team list's attributes (gsi3 also holds invites and outbox messages).
      {
        actions: ['dynamodb:Query'],
        resources: ['table/index/gsi3'],
        condition: {
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...WEBHOOK_SWEEP_ATTRIBUTES.teamList] },
          StringEqualsIfExists: { 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' },
        },
      },
    ]);
    expect([...new Set(table.flatMap(actionsOf))].sort()).toEqual(WEBHOOK_SWEEP.actions.map((a) => `dynamodb:${a}`).sort());
    expect(sqsOf(WEBHOOK_SWEEP.name)).toEqual({ actions: SEND, resources: ['queue:WebhookQueue'] });
    expect(variables(WEBHOOK_SWEEP.name)).toMatchObject({ TABLE_NAME: { Ref: tableId }, WEBHOOK_QUEUE_URL: { Ref: webhookQueue } });
    expect(ruleOf(WEBHOOK_SWEEP.name).Properties.ScheduleExpression).toBe('rate(1 hour)');
  });
});

/** The schedule rule whose target is the function `name`. */
const ruleOf = (name: string): Resource => {
  const found = ofType('AWS::Events::Rule').filter(([, r]) =>
    (r.Properties.Targets as { Arn: unknown }[]).some(
      (t) => JSON.stringify(t.Arn) === JSON.stringify({ 'Fn::GetAtt': [logicalId(name), 'Arn'] }),
    ),
  );
  expect(found).toHaveLength(1);
  return (found[0] as [string, Resource])[1];
};

describe('invite sweeper', () => {
  it('runs on a schedule, without retries (the next tick goes on), with a timeout past its reserve', () => {
    const rule = ruleOf(INVITE_SWEEP.name);
    expect(rule.Properties.ScheduleExpression).toBe(
      `rate(${INVITE_SWEEP.everyMinutes} minute${INVITE_SWEEP.everyMinutes === 1 ? '' : 's'})`,
    );
    expect(rule.Properties.State ?? 'ENABLED').toBe('ENABLED');
    const [target] = rule.Properties.Targets as { Arn: unknown; RetryPolicy?: { MaximumRetryAttempts: number } }[];
    expect(target?.Arn).toEqual({ 'Fn::GetAtt': [logicalId(INVITE_SWEEP.name), 'Arn'] });
    expect(target?.RetryPolicy?.MaximumRetryAttempts).toBe(0);
    const timeout = functionOf(INVITE_SWEEP.name).Properties.Timeout as number;
    expect(timeout).toBe(INVITE_SWEEP.timeoutSeconds);
    expect(timeout * 1000).toBeGreaterThan(SWEEP_RESERVE_MS);
  });

  it('may use exactly its actions on the table and gsi3, nothing else', () => {
    const statements = statementsOf(INVITE_SWEEP.name);
    const actions = statements
      .flatMap(actionsOf)
      .filter((a) => !a.startsWith('logs:'))
      .sort();
    expect(actions).toEqual(INVITE_SWEEP.actions.map((a) => `dynamodb:${a}`).sort());
    expect(resourcesOf(statements.filter((s) => actionsOf(s).includes('dynamodb:Query')))).toEqual(['table', 'table/index/gsi3']);
    expect(variables(INVITE_SWEEP.name)).toEqual({ TABLE_NAME: { Ref: tableId } });
  });
});

describe('outbox sweeper', () => {
  it('runs on a schedule, without retries (the next tick goes on), with its own timeout', () => {
    const rule = ruleOf(OUTBOX_SWEEP.name);
    expect(rule.Properties.ScheduleExpression).toBe(
      `rate(${OUTBOX_SWEEP.everyMinutes} minute${OUTBOX_SWEEP.everyMinutes === 1 ? '' : 's'})`,
    );
    expect(rule.Properties.State ?? 'ENABLED').toBe('ENABLED');
    const [target] = rule.Properties.Targets as { RetryPolicy?: { MaximumRetryAttempts: number } }[];
    expect(target?.RetryPolicy?.MaximumRetryAttempts).toBe(0);
    expect(functionOf(OUTBOX_SWEEP.name).Properties.Timeout).toBe(OUTBOX_SWEEP.timeoutSeconds);
  });

  it("sends as the mailer does: the same mail settings, the mailer's actions and its own on the table and gsi3", () => {
    const statements = statementsOf(OUTBOX_SWEEP.name);
    const actions = statements
      .flatMap(actionsOf)
      .filter((a) => !a.startsWith('logs:'))
      .sort();
    expect(actions).toEqual([...new Set([...MAILER.actions, ...OUTBOX_SWEEP.actions])].map((a) => `dynamodb:${a}`).sort());
    expect(resourcesOf(statements.filter((s) => actionsOf(s).includes('dynamodb:Query')))).toEqual([
      'table',
      ...OUTBOX_SWEEP.indexes.map((i) => `table/index/${i}`),
    ]);
    const mailSettings = Object.entries(variables(MAILER.name)).filter(([key]) => key !== 'MAIL_QUEUE_URL');
    expect(variables(OUTBOX_SWEEP.name)).toEqual(Object.fromEntries(mailSettings));
  });
});

describe('HTTP API (K3)', () => {
  const routes = ofType('AWS::ApiGatewayV2::Route');
  /** The function behind a route: its integration calls the function's live alias. */
  const integrationTarget = (route: Resource): string => {
    const target = route.Properties.Target as { 'Fn::Join': [string, [string, { Ref: string }]] };
    const integration = resources[target['Fn::Join'][1][1].Ref] as Resource;
    const alias = resources[(integration.Properties.IntegrationUri as { Ref: string }).Ref] as Resource;
    expect(alias.Type).toBe('AWS::Lambda::Alias');
    expect(alias.Properties.Name).toBe(LIVE_ALIAS);
    return (alias.Properties.FunctionName as { Ref: string }).Ref;
  };

  it('has exactly the route table, each on its own function, and the fallback on $default', () => {
    const keys = routes.map(([, r]) => r.Properties.RouteKey as string);
    expect(keys.sort()).toEqual([...ROUTES.map((r) => `${r.method} ${r.path}`), '$default'].sort());
    for (const route of ROUTES) {
      const [, found] = routes.find(([, r]) => r.Properties.RouteKey === `${route.method} ${route.path}`) as [string, Resource];
      expect(integrationTarget(found)).toBe(logicalId(route.name));
    }
    const [, fallback] = routes.find(([, r]) => r.Properties.RouteKey === '$default') as [string, Resource];
    expect(integrationTarget(fallback)).toBe(logicalId(FALLBACK));
  });

  it('throttles every route at the safety ceiling, the credential routes (passwords, passkeys, refresh and mailed tokens) at theirs', () => {
    expect(stage.Properties.StageName).toBe('$default');
    expect(stage.Properties.AutoDeploy).toBe(true);
    expect(stage.Properties.DefaultRouteSettings).toEqual({
      ThrottlingRateLimit: DEFAULT_OPTIONS.routes.rateLimit,
      ThrottlingBurstLimit: DEFAULT_OPTIONS.routes.burstLimit,
    });
    // The issue's floors: abuse is stopped in the table, so the gateway never caps paying users below these.
    expect(DEFAULT_OPTIONS.routes.rateLimit).toBeGreaterThanOrEqual(1000);
    expect(DEFAULT_OPTIONS.credentials.rateLimit).toBeGreaterThanOrEqual(100);
    const settings = stage.Properties.RouteSettings as Record<string, { ThrottlingRateLimit: number; ThrottlingBurstLimit: number }>;
    const credentialKeys = ROUTES.filter((r) => CREDENTIAL_ROUTES.includes(r.name)).map((r) => `${r.method} ${r.path}`);
    expect(credentialKeys.sort()).toEqual([
      'DELETE /api/auth/user',
      'GET /api/auth/oauth/{provider}',
      'GET /auth/v1/authorize',
      'GET /auth/v1/callback',
      'POST /account/security',
      'POST /api/auth/oauth/token',
      'POST /api/auth/passkeys/challenge',
      'POST /api/auth/passkeys/sign-in',
      'POST /api/auth/recover',
      'POST /api/auth/refresh',
      'POST /api/auth/reset',
      'POST /api/auth/signin',
      'POST /api/auth/signup',
      'POST /api/auth/verify',
      'PUT /api/auth/user',
    ]);
    expect([...CREDENTIAL_ROUTES].sort()).toEqual([
      'auth-oauth-authorize',
      'auth-oauth-callback',
      'auth-oauth-token',
      'auth-passkeys-challenge',
      'auth-passkeys-sign-in',
      'auth-recover',
      'auth-refresh',
      'auth-reset',
      'auth-signin',
      'auth-signup',
      'auth-user-delete',
      'auth-user-update',
      'auth-verify',
      'gotrue-authorize',
      'page-security-action',
    ]);
    expect(Object.keys(settings).sort()).toEqual(credentialKeys);
    for (const key of credentialKeys) {
      expect(settings[key]).toEqual({
        ThrottlingRateLimit: DEFAULT_OPTIONS.credentials.rateLimit,
        ThrottlingBurstLimit: DEFAULT_OPTIONS.credentials.burstLimit,
      });
      // RouteSettings need the route to exist when the stage is created or updated.
      const [routeId] = routes.find(([, r]) => r.Properties.RouteKey === key) as [string, Resource];
      expect(stage.DependsOn).toContain(routeId);
    }
  });

  it('takes the throttles from context (cdk deploy -c …), and refuses nonsense at synth with one sentence', () => {
    const stageWith = (context: Record<string, unknown>) => {
      const [, found] = synth(context).only('AWS::ApiGatewayV2::Stage');
      return found.Properties;
    };
    const tuned = stageWith({ throttleRate: '5000', throttleBurst: '8000', credentialThrottleRate: 300, credentialThrottleBurst: '600' });
    expect(tuned.DefaultRouteSettings).toEqual({ ThrottlingRateLimit: 5000, ThrottlingBurstLimit: 8000 });
    for (const setting of Object.values(tuned.RouteSettings as Record<string, unknown>)) {
      expect(setting).toEqual({ ThrottlingRateLimit: 300, ThrottlingBurstLimit: 600 });
    }
    expect(() => stageWith({ throttleRate: 'fast' })).toThrow('context throttleRate must be a positive integer, not "fast"');
    expect(() => stageWith({ credentialThrottleRate: '0' })).toThrow('context credentialThrottleRate must be a positive integer');
    expect(() => stageWith({ throttleRate: '3000' })).toThrow('context throttleBurst (2000) must be at least throttleRate (3000)');
    expect(() => stageWith({ reservedConcurrency: 'yes' })).toThrow('context reservedConcurrency must be true or false, not "yes"');
  });

  it("writes access logs without headers, paths or bodies, joinable to the function's lines, to a log group with retention", () => {
    const settings = stage.Properties.AccessLogSettings as { DestinationArn: { 'Fn::GetAtt': [string, string] }; Format: string };
    const logGroup = resources[settings.DestinationArn['Fn::GetAtt'][0]] as Resource;
    expect(logGroup.Type).toBe('AWS::Logs::LogGroup');
    expect(logGroup.Properties.RetentionInDays).toBeGreaterThan(0);
    expect(JSON.parse(settings.Format)).toEqual(ACCESS_LOG_FIELDS);
    for (const variable of [
      '$context.requestId',
      '$context.integration.requestId',
      '$context.identity.sourceIp',
      '$context.routeKey',
      '$context.status',
    ]) {
      expect(settings.Format).toContain(variable);
    }
    expect(settings.Format).not.toMatch(/header|body|querystring|authorizer|\$context\.path/i);
  });
});

describe('a restored table (-c tableName, -c tableStreamArn)', () => {
  const STREAM = 'arn:aws:dynamodb:eu-west-1:123456789012:table/roster-restored/stream/2026-01-02T03:04:05.678';
  const restored = synth({ tableName: 'roster-restored', tableStreamArn: STREAM });
  const tableArn = {
    'Fn::Join': [
      '',
      ['arn:', { Ref: 'AWS::Partition' }, ':dynamodb:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':table/roster-restored'],
    ],
  };

  it("moves every function, its grants and the stream's one mapping to it, and no longer imports the data stack's table", () => {
    for (const name of [...restored.stack.endpoints.keys(), ...restored.stack.background.keys()]) {
      const env = restored.variables(name);
      if ('TABLE_NAME' in env) expect(env.TABLE_NAME, name).toBe('roster-restored');
      const onTable = restored
        .statementsOf(name)
        .filter((st) => actionsOf(st).some((a) => a.startsWith('dynamodb:')) && !actionsOf(st).includes('dynamodb:ListStreams'));
      for (const statement of onTable.filter((st) => !actionsOf(st).includes('dynamodb:GetRecords'))) {
        // The table's ARN, or one of its indexes' (`<table>/index/…`).
        expect(JSON.stringify(statement.Resource), name).toContain(JSON.stringify(tableArn).slice(0, -'"]]}'.length));
      }
    }
    const mappings = restored
      .ofType('AWS::Lambda::EventSourceMapping')
      .filter(([, m]) => !JSON.stringify(m.Properties.EventSourceArn).includes('Queue'));
    expect(mappings).toHaveLength(1);
    for (const [, mapping] of mappings) expect(mapping.Properties.EventSourceArn).toBe(STREAM);
    expect(JSON.stringify(restored.rawJson)).not.toMatch(/ImportValue":"RosterData:ExportsOutput(Ref|FnGetAtt)Table/);
    // The secret and the queues still come from the data stack, which keeps the old table.
    expect(JSON.stringify(restored.rawJson)).toContain('"Fn::ImportValue"');
    expect(Object.values(restored.dataResources).filter((r) => r.Type === 'AWS::DynamoDB::Table')).toHaveLength(1);
  });

  it('watches the restored table', () => {
    expect(JSON.stringify(restored.ofType('AWS::CloudWatch::Alarm'))).toContain('"roster-restored"');
  });
});

describe('monitoring and outputs', () => {
  const alarms = ofType('AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
  const alarmsOn = (id: string): Record<string, unknown>[] => alarms.filter((a) => JSON.stringify(a).includes(`"${id}"`));
  const named = (id: string): Record<string, unknown> | undefined => alarms.find((a) => a.AlarmName === `${STACK_ID}-${id}`);
  const paging = synth({ functionAlarms: 'true' });

  it('with -c functionAlarms=true, watches every function on its own metrics, an API function through its live alias', () => {
    const pagingAlarms = paging.ofType('AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
    for (const name of everyFunction) {
      const watching = pagingAlarms.filter((a) => JSON.stringify(a).includes(`"${paging.logicalId(name)}"`));
      expect(watching.length, name).toBeGreaterThan(0);
      if (allNames.includes(name)) expect(JSON.stringify(watching), name).toContain(`:${LIVE_ALIAS}`);
    }
  });

  it("watches every queue, the stream reader's iterator age, the API and the table, each kind in one alarm", () => {
    for (const [queueId] of dataOfType('AWS::SQS::Queue')) expect(alarmsOn(queueId).length, queueId).toBeGreaterThan(0);
    // The webhook queue holds messages up to 28 hours by design (an endpoint that is down): the
    // backlog alarm is on first attempts an hour old.
    const webhookQueue = Object.keys(dataResources).find((id) => id.startsWith('WebhookQueue')) as string;
    expect(alarmsOn(webhookQueue).map((a) => a.AlarmName)).toEqual([`${STACK_ID}-backlog`]);
    expect(named('backlog')).toMatchObject({ Threshold: 3600, EvaluationPeriods: 3 });
    expect(JSON.stringify(named('stream-iterator-age'))).toContain(
      JSON.stringify({ Name: 'FunctionName', Value: { Ref: logicalId(STREAM_DISPATCH.name) } }),
    );
    expect(alarms.filter((a) => JSON.stringify(a).includes('IteratorAge'))).toHaveLength(1);
    expect(alarmsOn(only('AWS::ApiGatewayV2::Api')[0]).length).toBeGreaterThan(0);
    expect(alarmsOn(tableId).map((a) => a.AlarmName)).toEqual([`${STACK_ID}-table-errors`]);
  });

  it('tells the monitoring how long a run of the self-stopping functions lasts by design (timeout minus reserve)', () => {
    const reserves = { [TEAM_CLEANUP.name]: RESERVE_MS, [INVITE_SWEEP.name]: SWEEP_RESERVE_MS, [OUTBOX_SWEEP.name]: OUTBOX_RESERVE_MS };
    for (const [name, reserveMs] of Object.entries(reserves)) {
      const timeoutMs = (paging.functionOf(name).Properties.Timeout as number) * 1000;
      const [health] = paging.ofType('AWS::CloudWatch::Alarm').filter(([, a]) => a.Properties.AlarmName === `${STACK_ID}-${name}-health`);
      expect(JSON.stringify(health?.[1].Properties.Metrics), name).toContain(
        `>= ${Math.round(Math.max(DURATION_SHARE * timeoutMs, timeoutMs - reserveMs / 2))}`,
      );
    }
  });

  it("pages through the service's alarms only: five, none per function", () => {
    const notifying = [...ofType('AWS::CloudWatch::Alarm'), ...ofType('AWS::CloudWatch::CompositeAlarm')]
      .filter(([, a]) => ((a.Properties.AlarmActions ?? []) as unknown[]).length > 0)
      .map(([, a]) => String(a.Properties.AlarmName).replace(`${STACK_ID}-`, ''));
    expect(notifying.sort()).toEqual(['api', 'backlog', 'dead-letters', 'stream-iterator-age', 'table-errors']);
  });

  it("outputs the API URL, the tokens' issuer and the mail status; the data stack the table name", () => {
    expect(Object.keys(json.Outputs).sort()).toEqual(['ApiUrl', 'Mail', 'TokenIssuer']);
    expect(Object.entries(dataJson.Outputs).filter(([, o]) => !o.Export)).toEqual([['TableName', { Value: { Ref: tableId } }]]);
  });
});

describe('bundle', () => {
  const dir = mkdtempSync(join(tmpdir(), 'roster-bundle-'));
  const segment = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  const wellFormedToken = `${segment({ alg: 'EdDSA', typ: 'at+jwt', kid: 'k1' })}.${segment({ sub: 'x', session_id: 's', email: 'x@example.com', iat: 1, exp: 2 })}.${Buffer.alloc(64).toString('base64url')}`;
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // A bad ESM bundle fails with "Dynamic require of node:https is not supported" only when the SDK
  // first sends. So call the handler in a plain Node process: a well-formed token makes it fetch
  // the public keys from a DynamoDB endpoint that refuses connections, which needs the SDK's HTTP
  // stack loaded; deployed (no DYNAMODB_ENDPOINT), it answers 503 and makes up no key.
  it('builds a function with the stack esbuild settings into ESM whose SDK can send', async () => {
    const outfile = join(dir, 'index.mjs');
    const entry = fileURLToPath(new URL('../../functions/teams-get.ts', import.meta.url));
    const result = await build({ ...ESBUILD, entryPoints: [entry], outfile, logLevel: 'silent' });
    expect(result.errors).toEqual([]);
    const event = {
      rawPath: '/api/teams/a',
      pathParameters: { slug: 'a' },
      headers: { authorization: `Token ${wellFormedToken}` },
      requestContext: { http: { method: 'GET' }, requestId: 'r1' },
    };
    const script = `const { handler } = await import(${JSON.stringify(outfile)});
      const context = { awsRequestId: 'r1', getRemainingTimeInMillis: () => 9000 };
      console.log(JSON.stringify(await handler(${JSON.stringify(event)}, context)));`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 30_000,
      env: {
        PATH: process.env.PATH,
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'test',
        AWS_SECRET_ACCESS_KEY: 'test',
        AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
        DATA_DIR: dir,
      },
    });
    expect(run.stderr).not.toMatch(/Dynamic require/);
    expect(run.stderr).toMatch(/signing keys unavailable.*(ECONNREFUSED|connect)/);
    // The handler's own log lines come first (lib/core/log.ts writes to stdout); the answer is the last line.
    expect(JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '')).toMatchObject({ statusCode: 503 });
    expect(existsSync(join(dir, 'signing-keys.json')), 'a deployed verifier made up a key').toBe(false);
  });

  // Node builds an ESM facade for an imported builtin by reading all its exports, which loads more
  // of Node (node:http's getters load undici): the bundles reach builtins through infra/builtins/.
  it("no function's bundle imports a Node builtin as an ES module", async () => {
    const functionsDir = fileURLToPath(new URL('../../functions/', import.meta.url));
    const entryPoints = readdirSync(functionsDir)
      .filter((file) => file.endsWith('.ts'))
      .map((file) => join(functionsDir, file));
    const outdir = join(dir, 'all');
    const result = await build({ ...ESBUILD, entryPoints, outdir, outExtension: { '.js': '.mjs' }, write: false, logLevel: 'silent' });
    const bundles = result.outputFiles.filter((file) => file.path.endsWith('.mjs'));
    expect(bundles).toHaveLength(entryPoints.length);
    for (const { path, text } of bundles) {
      const imported = [...text.matchAll(/\b(?:from|import)\s*["']([^"']+)["']/g)].map((match) => match[1] ?? '');
      expect(
        imported.filter((specifier) => isBuiltin(specifier)),
        path,
      ).toEqual([]);
    }
    expect(bundles.find((file) => file.path.endsWith('teams-get.mjs'))?.text).toContain('process.getBuiltinModule("node:http")');
  });

  // esbuild's alias of `stream` would also take `stream/promises` (to `…/stream.cjs/promises`).
  it('shims every sub-path of a builtin it shims', () => {
    const listed: readonly string[] = BUILTINS;
    const subPaths = builtinModules.filter((name) => name.includes('/') && listed.includes(name.split('/')[0] ?? ''));
    expect(subPaths.filter((name) => !listed.includes(name))).toEqual([]);
  });

  it('has a shim for each builtin it lists, and no other', () => {
    const shims = readdirSync(fileURLToPath(new URL('../../infra/builtins/', import.meta.url))).sort();
    expect(shims).toEqual(BUILTINS.map((name) => `${name.replace('/', '-')}.cjs`).sort());
  });
});
