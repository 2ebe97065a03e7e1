import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { rosterStacks, stageName } from '#infra/stack.ts';

interface Template {
  Resources?: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
  Outputs?: Record<string, { Export?: { Name?: unknown } }>;
}

/**
 * The properties that name a resource uniquely in an account and region (a metric's or a policy's
 * name is not one of them), and the resource types whose `Name` is such a name.
 */
const UNIQUE = new Set([
  'AlarmName',
  'TopicName',
  'TableName',
  'FunctionName',
  'QueueName',
  'DashboardName',
  'LogGroupName',
  'RoleName',
  'ApplicationName',
  'DeploymentGroupName',
  'ConfigurationSetName',
  'AliasName',
  'BucketName',
  'ScheduleName',
]);
const NAMED_BY_NAME = new Set(['AWS::SecretsManager::Secret', 'AWS::Events::Rule', 'AWS::Scheduler::Schedule', 'AWS::SSM::Parameter']);

/** Every literal name a template gives a resource, or an export. */
const namesIn = (template: Template): string[] => [
  ...Object.values(template.Resources ?? {}).flatMap(({ Type, Properties = {} }) =>
    Object.entries(Properties)
      .filter(([key, value]) => (UNIQUE.has(key) || (key === 'Name' && NAMED_BY_NAME.has(Type))) && typeof value === 'string')
      .map(([key, value]) => `${Type} ${key} ${String(value)}`),
  ),
  ...Object.values(template.Outputs ?? {}).flatMap(({ Export }) => (typeof Export?.Name === 'string' ? [`export ${Export.Name}`] : [])),
];

describe('stages (-c stage=NAME)', () => {
  it('puts two stages in one app, account and region without a name twice; the default keeps its stack names', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const production = rosterStacks(app);
    const staging = rosterStacks(app, {}, 'staging');
    expect([production.data, production.api, staging.data, staging.api].map((s) => s.stackName)).toEqual([
      'RosterData',
      'Roster',
      'RosterData-staging',
      'Roster-staging',
    ]);
    const assembly = app.synth();
    // The top-level templates and the nested stacks' (files of their own in the assembly).
    const templates = readdirSync(assembly.directory)
      .filter((file) => file.endsWith('.template.json'))
      .map((file) => JSON.parse(readFileSync(join(assembly.directory, file), 'utf8')) as Template);
    const names = templates.flatMap(namesIn);
    expect(names.length).toBeGreaterThan(50);
    const twice = names.filter((name, n) => names.indexOf(name) !== n);
    expect(twice).toEqual([]);
    // Alarms are named after their stage's stack.
    expect(names.filter((n) => n.startsWith('AWS::CloudWatch::Alarm AlarmName Roster-staging-')).length).toBeGreaterThan(0);
  }, 120_000);

  it('takes a stage name AWS can carry in every name derived from it', () => {
    expect(stageName(undefined)).toBeUndefined();
    expect(stageName('staging')).toBe('staging');
    expect(stageName('pr-1234')).toBe('pr-1234');
    for (const bad of ['', '1st', 'has space', 'under_score', 'a'.repeat(21), 7]) expect(() => stageName(bad)).toThrow(/context stage/);
  });
});
