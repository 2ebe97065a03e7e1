import { App, type CfnResource } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ESBUILD } from '../../infra/endpoint.ts';
import { ACCESS_LOG_FIELDS, CLEANUP_RETRY_ATTEMPTS, CREDENTIAL_ROUTES, KEY_ROTATION, KEY_ROTATION_DAYS, MAILER, MAIL_RETRY_ATTEMPTS, RosterStack } from '../../infra/stack.ts';
import { DEFAULT_OPTIONS } from '../../infra/options.ts';
import { SIGNING_KEYS_ITEM, signingKeys, signingKeysPartitionKey } from '../../lib/db/entities/keys.ts';
import { KEYS, createTableInput, TTL_ATTRIBUTE } from '../../lib/db/table.ts';
import { FALLBACK, FUNCTION_DEFAULTS, ROUTES } from '../../lib/http/routes.ts';
import { INVITE_SWEEP, TEAM_CLEANUP } from '../../lib/background.ts';
import { RESERVE_MS as SWEEP_RESERVE_MS } from '../../lib/invite-sweep.ts';
import { RESERVE_MS } from '../../lib/team-cleanup.ts';

/**
 * K1–K5 (and G9's rotation schedule) on the synthesized template. Bundling is skipped here (`aws:cdk:bundling-stacks: []`);
 * the last block bundles one function with the same esbuild settings and calls it.
 */
interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
  DependsOn?: string[];
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
}
interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
const stack = new RosterStack(app, 'Roster');
const json = Template.fromStack(stack).toJSON() as { Resources: Record<string, Resource>; Outputs: Record<string, unknown> };
const resources = json.Resources;

const ofType = (type: string): [string, Resource][] => Object.entries(resources).filter(([, r]) => r.Type === type);
const only = (type: string): [string, Resource] => {
  const [first, ...more] = ofType(type);
  if (!first || more.length > 0) throw new Error(`expected exactly one ${type}`);
  return first;
};
const [tableId, table] = only('AWS::DynamoDB::Table');
const [secretId, secret] = only('AWS::SecretsManager::Secret');
const [, stage] = only('AWS::ApiGatewayV2::Stage');

const logicalId = (name: string): string => {
  const fn =
    name === KEY_ROTATION
      ? stack.keyRotation
      : name === MAILER
        ? stack.mailer
        : name === TEAM_CLEANUP.name
          ? stack.teamCleanup
          : name === INVITE_SWEEP.name
            ? stack.inviteSweep
            : stack.endpoints.get(name);
  if (!fn) throw new Error(`no function ${name}`);
  return stack.getLogicalId(fn.node.defaultChild as CfnResource);
};
const functionOf = (name: string): Resource => resources[logicalId(name)] as Resource;
const routeNames = ROUTES.map((r) => r.name);
/** The API's functions: one per route, and the fallback. */
const allNames = [...routeNames, FALLBACK];
/** Every function of ours: the API's, the key rotation function, the mailer, the team cleanup and the invite sweeper. */
const everyFunction = [...allNames, KEY_ROTATION, MAILER, TEAM_CLEANUP.name, INVITE_SWEEP.name];
/** The functions that are not behind the gateway, with timeouts of their own. */
const background: string[] = [TEAM_CLEANUP.name, INVITE_SWEEP.name];
const signers = ROUTES.filter((r) => 'signs' in r && r.signs).map((r) => r.name);

/** Every statement of the function's role: its own policies, inline or attached; no managed ones. */
const statementsOf = (name: string): Statement[] => {
  const role = functionOf(name).Properties.Role as { 'Fn::GetAtt': [string, string] };
  const roleId = role['Fn::GetAtt'][0];
  const roleProps = (resources[roleId] as Resource).Properties;
  expect(roleProps.ManagedPolicyArns ?? []).toEqual([]);
  const inline = ((roleProps.Policies ?? []) as { PolicyDocument: { Statement: Statement[] } }[]).flatMap(
    (p) => p.PolicyDocument.Statement,
  );
  const attached = ofType('AWS::IAM::Policy')
    .filter(([, p]) => (p.Properties.Roles as unknown[]).some((r) => JSON.stringify(r) === JSON.stringify({ Ref: roleId })))
    .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  return [...inline, ...attached];
};
const actionsOf = (s: Statement): string[] => [s.Action].flat();

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Names a resource reference of a policy: `table`, `table/index/gsi1`, `secret`, or the raw JSON. */
const describeResource = (ref: unknown): string => {
  const text = JSON.stringify(ref);
  const tableArn = JSON.stringify({ 'Fn::GetAtt': [tableId, 'Arn'] });
  if (text === tableArn) return 'table';
  const index = new RegExp(`^\\{"Fn::Join":\\["",\\[${escapeRegExp(tableArn)},"/index/([\\w-]+)"\\]\\]\\}$`).exec(text);
  if (index) return `table/index/${index[1]}`;
  if (text === JSON.stringify({ Ref: secretId })) return 'secret';
  return text;
};
const resourcesOf = (statements: Statement[]): string[] =>
  [...new Set(statements.flatMap((s) => [s.Resource].flat().map(describeResource)))].sort();

describe('functions', () => {
  it('has one function per route plus the fallback and the key rotation, and no other of ours', () => {
    expect(stack.endpoints.size).toBe(ROUTES.length + 1);
    expect([...stack.endpoints.keys()].sort()).toEqual([...allNames].sort());
    // CDK may add helper functions (log retention, custom resources); none of them is an endpoint.
    const ours = ofType('AWS::Lambda::Function')
      .map(([id]) => id)
      .filter((id) => !/^(LogRetention|CustomResource|AWS[0-9a-f]{32})/.test(id));
    expect(ours.sort()).toEqual(everyFunction.map(logicalId).sort());
  });

  it.each(everyFunction)('%s: Node 24 on arm64, the default limits, JSON logs to a log group with retention', (name) => {
    const props = functionOf(name).Properties;
    expect(props.Runtime).toBe('nodejs24.x');
    expect(props.Architectures).toEqual(['arm64']);
    expect(props.MemorySize).toBe(FUNCTION_DEFAULTS.memoryMb);
    // The background functions' timeouts fit their time budgets (their own blocks below).
    if (!background.includes(name)) {
      expect(props.Timeout).toBe(FUNCTION_DEFAULTS.timeoutSeconds);
      expect(props.Timeout).toBeLessThan(29); // API Gateway's integration timeout
    }
    const logging = props.LoggingConfig as { LogFormat: string; LogGroup: { Ref: string } };
    expect(logging.LogFormat).toBe('JSON');
    expect((resources[logging.LogGroup.Ref] as Resource).Properties.RetentionInDays).toBeGreaterThan(0);
  });

  it('has no function URL; only this API may invoke the API functions, and only rotating this secret the rotation function', () => {
    expect(ofType('AWS::Lambda::Url')).toEqual([]);
    const apiId = only('AWS::ApiGatewayV2::Api')[0];
    const rotation = { 'Fn::GetAtt': [logicalId(KEY_ROTATION), 'Arn'] };
    const permissions = ofType('AWS::Lambda::Permission').map(([, p]) => p.Properties);
    const [forRotation, ...more] = permissions.filter((p) => JSON.stringify(p.FunctionName) === JSON.stringify(rotation));
    expect(more).toEqual([]);
    // The invite sweeper: only its own schedule rule may invoke it.
    const sweeper = { 'Fn::GetAtt': [logicalId(INVITE_SWEEP.name), 'Arn'] };
    const [forSweeper, ...moreSweeper] = permissions.filter((p) => JSON.stringify(p.FunctionName) === JSON.stringify(sweeper));
    expect(moreSweeper).toEqual([]);
    const ruleId = only('AWS::Events::Rule')[0];
    expect(forSweeper).toMatchObject({ Action: 'lambda:InvokeFunction', Principal: 'events.amazonaws.com', SourceArn: { 'Fn::GetAtt': [ruleId, 'Arn'] } });
    expect(forRotation).toMatchObject({
      Action: 'lambda:InvokeFunction',
      Principal: 'secretsmanager.amazonaws.com',
      SourceArn: { Ref: secretId },
      SourceAccount: { Ref: 'AWS::AccountId' },
    });
    for (const permission of permissions.filter((p) => p !== forRotation && p !== forSweeper)) {
      expect(permission.Principal).toBe('apigateway.amazonaws.com');
      expect(JSON.stringify(permission.SourceArn)).toContain(JSON.stringify({ Ref: apiId }));
    }
  });

  it('reserves no concurrency by default: the deploy must succeed on an account whose quota is 10', () => {
    for (const [id, fn] of ofType('AWS::Lambda::Function')) expect(fn.Properties, id).not.toHaveProperty('ReservedConcurrentExecutions');
  });

  it('reserves the route table\'s concurrency when the deploy opts in (-c reservedConcurrency=true)', () => {
    const opted = new RosterStack(new App({ context: { 'aws:cdk:bundling-stacks': [], reservedConcurrency: 'true' } }), 'Roster');
    const optedResources = (Template.fromStack(opted).toJSON() as { Resources: Record<string, Resource> }).Resources;
    // The same construct tree, so the same logical ids as the default stack's.
    const reservedOf = (name: string): unknown => optedResources[logicalId(name)]?.Properties.ReservedConcurrentExecutions;
    for (const route of ROUTES) expect(reservedOf(route.name), route.name).toBe('reservedConcurrency' in route ? route.reservedConcurrency : undefined);
    for (const name of ['auth-signin', 'auth-signup', 'auth-refresh']) expect(reservedOf(name), name).toBeGreaterThan(0);
    expect(reservedOf(FALLBACK)).toBeUndefined();
  });
});

describe('environment and secret', () => {
  const variables = (name: string): Record<string, unknown> =>
    ((functionOf(name).Properties.Environment as { Variables?: Record<string, unknown> }) ?? {}).Variables ?? {};

  it.each(routeNames)('%s gets the table name if it reads the table, and the secret ARN (never a value) only if it signs', (name) => {
    const env = variables(name);
    if (ROUTES.find((r) => r.name === name)?.actions.length) expect(env.TABLE_NAME).toEqual({ Ref: tableId });
    else expect(env).not.toHaveProperty('TABLE_NAME');
    // A Ref to a secret is its ARN; a {{resolve:secretsmanager:...}} reference would inline the value.
    if (signers.includes(name)) expect(env.SIGNING_KEY_SECRET_ARN).toEqual({ Ref: secretId });
    else expect(env).not.toHaveProperty('SIGNING_KEY_SECRET_ARN');
    // Source maps stay unloaded: parsing one costs every cold start (infra/endpoint.ts).
    expect(env).not.toHaveProperty('NODE_OPTIONS');
  });

  it('signs tokens in sign-up, sign-in and refresh only', () => {
    expect([...signers].sort()).toEqual(['auth-refresh', 'auth-signin', 'auth-signup']);
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
    const text = JSON.stringify(json);
    expect(text.includes('"SecretString"'), 'a literal SecretString').toBe(false);
    expect(text.includes('resolve:secretsmanager'), 'a dynamic reference to a secret value').toBe(false);
    expect(text).not.toMatch(/"d"\s*:|PRIVATE KEY/);
  });

  it('rotates the keys on a schedule, and at once when the schedule is created (G9, SMG4)', () => {
    const [scheduleId, schedule] = only('AWS::SecretsManager::RotationSchedule');
    expect(schedule.Properties).toEqual({
      SecretId: { Ref: secretId },
      RotationLambdaARN: { 'Fn::GetAtt': [logicalId(KEY_ROTATION), 'Arn'] },
      RotationRules: { ScheduleExpression: `rate(${KEY_ROTATION_DAYS} days)` },
      RotateImmediatelyOnUpdate: true,
    });
    // Secrets Manager invokes the function as soon as the schedule exists: permission and policy first.
    const [permissionId] = ofType('AWS::Lambda::Permission').find(([, p]) => p.Properties.Principal === 'secretsmanager.amazonaws.com') as [string, Resource];
    const roleId = (functionOf(KEY_ROTATION).Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const [policyId] = ofType('AWS::IAM::Policy').find(([, p]) => JSON.stringify(p.Properties.Roles) === JSON.stringify([{ Ref: roleId }])) as [string, Resource];
    expect(schedule.DependsOn).toEqual(expect.arrayContaining([logicalId(KEY_ROTATION), permissionId, policyId]));
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
    // What the entity writes (test/unit/keys.test.ts checks the stored item against it too).
    const { Item } = signingKeys()
      .put({ ...SIGNING_KEYS_ITEM, keys: [], updatedAt: '2026-01-01T00:00:00.000Z' })
      .params<{ Item: Record<string, unknown> }>({ table: 'any' });
    expect(signingKeysPartitionKey()).toBe(Item[KEYS.pk]);
    expect(signingKeysPartitionKey()).toBe('$roster#purpose_access-token');
    // No wildcard or other partition: the policy names exactly this one value.
    const text = JSON.stringify(statementsOf(KEY_ROTATION).filter((s) => s.Condition));
    expect(text).not.toMatch(/StringLike|\*/);
  });

  it('scopes no other function by partition: their routes span many', () => {
    for (const name of allNames) expect(statementsOf(name).filter((s) => s.Condition), name).toEqual([]);
  });
});

describe('least privilege (K1)', () => {
  it.each(ROUTES.map((r) => [r.name, r] as const))('%s: exactly its route actions, on the table and its indexes', (name, route) => {
    const statements = statementsOf(name);
    const dynamo = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('dynamodb:')));
    expect(dynamo.flatMap(actionsOf).sort()).toEqual(route.actions.map((a) => `dynamodb:${a}`).sort());
    // The documentation routes read no table, so they get no statement at all.
    if (route.actions.length) expect(resourcesOf(dynamo)).toEqual(['table', ...route.indexes.map((i) => `table/index/${i}`)].sort());
    else expect(dynamo).toEqual([]);
  });

  it('gives the fallback no DynamoDB access', () => {
    expect(statementsOf(FALLBACK).flatMap(actionsOf).filter((a) => a.startsWith('dynamodb:'))).toEqual([]);
  });

  it.each(everyFunction)('%s: logs only to its own log group, and no other service', (name) => {
    const statements = statementsOf(name);
    const logs = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('logs:')));
    expect(logs.flatMap(actionsOf).sort()).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents']);
    const logGroup = (functionOf(name).Properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;
    expect(logs.map((s) => s.Resource)).toEqual([{ 'Fn::GetAtt': [logGroup, 'Arn'] }]);
    const services = new Set(statements.flatMap(actionsOf).map((a) => a.split(':')[0]));
    // The mailer alone also sends mail; the stream functions feed their dead-letter queues.
    const allowed =
      name === MAILER ? ['dynamodb', 'logs', 'ses', 'sqs'] : name === TEAM_CLEANUP.name ? ['dynamodb', 'logs', 'sqs'] : ['dynamodb', 'logs', 'secretsmanager'];
    expect([...services].every((s) => allowed.includes(s as string))).toBe(true);
  });

  it('allows no wildcard action or resource in any policy', () => {
    const statements = ofType('AWS::IAM::Policy').flatMap(
      ([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement,
    );
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

  it('has the keys and indexes of lib/db/table.ts', () => {
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

/** The stream mapping that invokes the function `name`. */
const mappingOf = (name: string): Resource => {
  const found = ofType('AWS::Lambda::EventSourceMapping').filter(([, m]) => JSON.stringify(m.Properties.FunctionName) === JSON.stringify({ Ref: logicalId(name) }));
  expect(found).toHaveLength(1);
  return (found[0] as [string, Resource])[1];
};

describe('mailer (outbox)', () => {
  const mapping = mappingOf(MAILER);

  it('reads only new outbox messages from the stream, retrying with bisection, then a dead-letter queue', () => {
    expect(mapping.Properties.FunctionName).toEqual({ Ref: logicalId(MAILER) });
    expect(mapping.Properties.BisectBatchOnFunctionError).toBe(true);
    expect(mapping.Properties.MaximumRetryAttempts).toBe(MAIL_RETRY_ATTEMPTS);
    expect(mapping.Properties.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    expect(JSON.stringify(mapping.Properties.DestinationConfig)).toContain('MailDeadLetters');
    const pattern = JSON.parse((mapping.Properties.FilterCriteria as { Filters: { Pattern: string }[] }).Filters[0]?.Pattern as string);
    expect(pattern).toEqual({ eventName: ['INSERT'], dynamodb: { NewImage: { __edb_e__: { S: ['outboxMessage'] } } } });
  });

  it('may read and update the table, send through its SES identity only, and read the stream', () => {
    const statements = statementsOf(MAILER);
    const actions = statements.flatMap(actionsOf).filter((a) => !a.startsWith('logs:')).sort();
    expect(actions).toEqual(
      ['dynamodb:DescribeStream', 'dynamodb:GetItem', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:ListStreams', 'dynamodb:UpdateItem', 'ses:SendEmail', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'].sort(),
    );
    const ses = statements.find((s) => actionsOf(s).includes('ses:SendEmail'));
    expect(JSON.stringify(ses?.Resource)).toContain(':identity/');
    expect((functionOf(MAILER).Properties.Environment as { Variables: Record<string, unknown> }).Variables).toMatchObject({ MAIL_TRANSPORT: 'ses' });
  });

  it('alarms when a message reaches the dead-letter queue', () => {
    const watched = ofType('AWS::CloudWatch::Alarm').map(([, a]) => `${a.Properties.Namespace as string}/${a.Properties.MetricName as string}`);
    expect(watched).toContain('AWS/SQS/ApproximateNumberOfMessagesVisible');
  });
});

describe('team cleanup', () => {
  const mapping = mappingOf(TEAM_CLEANUP.name);

  it('reads only the cleanup jobs\' INSERT and MODIFY records, one a batch, retrying with bisection, then a dead-letter queue', () => {
    expect(ofType('AWS::Lambda::EventSourceMapping')).toHaveLength(2);
    expect(mapping.Properties).toMatchObject({
      BatchSize: TEAM_CLEANUP.batchSize,
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: CLEANUP_RETRY_ATTEMPTS,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      StartingPosition: 'TRIM_HORIZON',
    });
    expect(JSON.stringify(mapping.Properties.DestinationConfig)).toContain('TeamCleanupDeadLetters');
    const pattern = JSON.parse((mapping.Properties.FilterCriteria as { Filters: { Pattern: string }[] }).Filters[0]?.Pattern as string);
    expect(pattern).toEqual({ eventName: ['INSERT', 'MODIFY'], dynamodb: { NewImage: { __edb_e__: { S: ['teamCleanup'] } } } });
  });

  it('has a timeout that leaves its time budget a reserve, beyond the API functions\' 29 s', () => {
    const timeout = functionOf(TEAM_CLEANUP.name).Properties.Timeout as number;
    expect(timeout).toBe(TEAM_CLEANUP.timeoutSeconds);
    expect(timeout * 1000).toBeGreaterThanOrEqual(4 * RESERVE_MS);
  });

  it('may use exactly its actions on the table and gsi1, read the stream and feed its queue, nothing else', () => {
    const statements = statementsOf(TEAM_CLEANUP.name);
    const actions = statements.flatMap(actionsOf).filter((a) => !a.startsWith('logs:')).sort();
    const stream = ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:ListStreams'];
    const queue = ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'];
    expect(actions).toEqual([...TEAM_CLEANUP.actions.map((a) => `dynamodb:${a}`), ...stream, ...queue].sort());
    const onTable = statements.filter((s) => actionsOf(s).includes('dynamodb:BatchWriteItem'));
    expect(resourcesOf(onTable)).toEqual(['table', 'table/index/gsi1']);
    expect(functionOf(TEAM_CLEANUP.name).Properties.Environment).toEqual({ Variables: { TABLE_NAME: { Ref: tableId } } });
  });

  it('alarms when a job reaches its dead-letter queue', () => {
    const queueId = ofType('AWS::SQS::Queue').find(([id]) => id.startsWith('TeamCleanupDeadLetters'))?.[0];
    const watching = ofType('AWS::CloudWatch::Alarm').filter(([, a]) => JSON.stringify(a.Properties.Dimensions ?? []).includes(String(queueId)));
    expect(watching).toHaveLength(1);
  });
});

describe('invite sweeper', () => {
  it('runs on a schedule, without retries (the next tick goes on), with a timeout past its reserve', () => {
    const [, rule] = only('AWS::Events::Rule');
    expect(rule.Properties.ScheduleExpression).toBe(`rate(${INVITE_SWEEP.everyMinutes} minute${INVITE_SWEEP.everyMinutes === 1 ? '' : 's'})`);
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
    const actions = statements.flatMap(actionsOf).filter((a) => !a.startsWith('logs:')).sort();
    expect(actions).toEqual(INVITE_SWEEP.actions.map((a) => `dynamodb:${a}`).sort());
    expect(resourcesOf(statements.filter((s) => actionsOf(s).includes('dynamodb:Query')))).toEqual(['table', 'table/index/gsi3']);
    expect(functionOf(INVITE_SWEEP.name).Properties.Environment).toEqual({ Variables: { TABLE_NAME: { Ref: tableId } } });
  });
});

describe('HTTP API (K3)', () => {
  const routes = ofType('AWS::ApiGatewayV2::Route');
  const integrationTarget = (route: Resource): string => {
    const target = route.Properties.Target as { 'Fn::Join': [string, [string, { Ref: string }]] };
    const integration = resources[target['Fn::Join'][1][1].Ref] as Resource;
    return (integration.Properties.IntegrationUri as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
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

  it('throttles every route at the safety ceiling, the credential routes (sign-up, sign-in, refresh, password change) at theirs', () => {
    expect(stage.Properties.StageName).toBe('$default');
    expect(stage.Properties.AutoDeploy).toBe(true);
    expect(stage.Properties.DefaultRouteSettings).toEqual({
      ThrottlingRateLimit: DEFAULT_OPTIONS.routes.rateLimit,
      ThrottlingBurstLimit: DEFAULT_OPTIONS.routes.burstLimit,
    });
    // The floors: abuse is stopped in the table, so the gateway never caps paying users below these.
    expect(DEFAULT_OPTIONS.routes.rateLimit).toBeGreaterThanOrEqual(1000);
    expect(DEFAULT_OPTIONS.credentials.rateLimit).toBeGreaterThanOrEqual(100);
    const settings = stage.Properties.RouteSettings as Record<string, { ThrottlingRateLimit: number; ThrottlingBurstLimit: number }>;
    const credentialKeys = ROUTES.filter((r) => CREDENTIAL_ROUTES.includes(r.name)).map((r) => `${r.method} ${r.path}`);
    expect(credentialKeys.sort()).toEqual(['POST /api/auth/refresh', 'POST /api/auth/signin', 'POST /api/auth/signup', 'PUT /api/auth/user']);
    expect([...CREDENTIAL_ROUTES].sort()).toEqual(['auth-refresh', 'auth-signin', 'auth-signup', 'auth-user-update']);
    expect(Object.keys(settings).sort()).toEqual(credentialKeys);
    for (const key of credentialKeys) {
      expect(settings[key]).toEqual({ ThrottlingRateLimit: DEFAULT_OPTIONS.credentials.rateLimit, ThrottlingBurstLimit: DEFAULT_OPTIONS.credentials.burstLimit });
      // RouteSettings need the route to exist when the stage is created or updated.
      const [routeId] = routes.find(([, r]) => r.Properties.RouteKey === key) as [string, Resource];
      expect(stage.DependsOn).toContain(routeId);
    }
  });

  it('takes the throttles from context (cdk deploy -c …), and refuses nonsense at synth with one sentence', () => {
    const stageWith = (context: Record<string, unknown>) => {
      const t = Template.fromStack(new RosterStack(new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } }), 'Roster'));
      return Object.values(t.findResources('AWS::ApiGatewayV2::Stage'))[0]?.Properties as Record<string, unknown>;
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

  it('writes access logs without headers or bodies to a log group with retention', () => {
    const settings = stage.Properties.AccessLogSettings as { DestinationArn: { 'Fn::GetAtt': [string, string] }; Format: string };
    const logGroup = resources[settings.DestinationArn['Fn::GetAtt'][0]] as Resource;
    expect(logGroup.Type).toBe('AWS::Logs::LogGroup');
    expect(logGroup.Properties.RetentionInDays).toBeGreaterThan(0);
    expect(JSON.parse(settings.Format)).toEqual(ACCESS_LOG_FIELDS);
    for (const variable of ['$context.requestId', '$context.identity.sourceIp', '$context.routeKey', '$context.status']) {
      expect(settings.Format).toContain(variable);
    }
    expect(settings.Format).not.toMatch(/header|body|querystring|authorizer/i);
  });
});

describe('alarms and outputs', () => {
  const alarms = ofType('AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
  const metricNames = (alarm: Record<string, unknown>): string[] =>
    alarm.MetricName
      ? [`${alarm.Namespace as string}/${alarm.MetricName as string}`]
      : (alarm.Metrics as { MetricStat?: { Metric: { Namespace: string; MetricName: string } } }[])
          .filter((m) => m.MetricStat)
          .map((m) => `${m.MetricStat?.Metric.Namespace}/${m.MetricStat?.Metric.MetricName}`);

  it('alarms on API 5xx, on every function error (rotation included), and on DynamoDB throttles and system errors', () => {
    const watched = alarms.flatMap(metricNames);
    expect(watched).toContain('AWS/ApiGateway/5xx');
    expect(watched).toContain('AWS/DynamoDB/ThrottledRequests');
    expect(watched).toContain('AWS/DynamoDB/SystemErrors');
    const erroring = alarms
      .filter((a) => a.MetricName === 'Errors' && a.Namespace === 'AWS/Lambda')
      .map((a) => (a.Dimensions as { Value: { Ref: string } }[])[0]?.Value.Ref);
    expect(erroring.sort()).toEqual(everyFunction.map(logicalId).sort());
    for (const alarm of alarms) expect(alarm.TreatMissingData).toBe('notBreaching');
  });

  it('outputs the API URL and the table name', () => {
    expect(Object.keys(json.Outputs).sort()).toEqual(['ApiUrl', 'TableName']);
    expect(json.Outputs.TableName).toEqual({ Value: { Ref: tableId } });
  });
});

describe('bundle', () => {
  const dir = mkdtempSync(join(tmpdir(), 'roster-bundle-'));
  const segment = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  const wellFormedToken = `${segment({ alg: 'EdDSA', typ: 'at+jwt', kid: 'k1' })}.${segment({ sub: 'x' })}.${Buffer.alloc(64).toString('base64url')}`;
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
    expect(JSON.parse(run.stdout)).toMatchObject({ statusCode: 503 });
    expect(existsSync(join(dir, 'signing-keys.json')), 'a deployed verifier made up a key').toBe(false);
  });
});
