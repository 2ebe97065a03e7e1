import { App, AssetStaging, type CfnResource, Stack } from 'aws-cdk-lib';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { rosterStacks } from '#infra/stack.ts';
import { DEPLOYMENT_CONFIG, LIVE_ALIAS } from '#infra/api-settings.ts';
import { FALLBACK, ROUTES } from '#lib/http/routes.ts';
import { routeGroup } from '#infra/monitoring/metrics.ts';
import { actionsOf, type Resource, synth } from '../infra/template.ts';

/**
 * Rollouts (issue 11, item 6) and tracing (item 7) on the synthesized template: each API function
 * is a version behind the `live` alias the HTTP API calls, moved by a CodeDeploy canary that rolls
 * back on the function's alarms (`-c gradualDeploy=true`); the default keeps the aliases without CodeDeploy;
 * `-c tracing=true` turns on Lambda active tracing. Last, two real synths (bundling included)
 * give the same templates and asset hashes.
 */
const apiNames = [...ROUTES.map((r) => r.name), FALLBACK];

describe('gradual deploys (-c gradualDeploy=true)', () => {
  const built = synth({ gradualDeploy: 'true' });
  const { resources, ofType, only, logicalId, stack } = built;
  const [applicationId] = only('AWS::CodeDeploy::Application');
  const [roleId, role] = deploymentRole(resources);

  it('publishes each API function as a version behind its live alias, and no background function', () => {
    const aliases = ofType('AWS::Lambda::Alias');
    expect(aliases).toHaveLength(apiNames.length);
    for (const name of apiNames) {
      const [, alias] = aliases.find(([, a]) => JSON.stringify(a.Properties.FunctionName) === JSON.stringify({ Ref: logicalId(name) })) as [
        string,
        Resource,
      ];
      expect(alias.Properties.Name).toBe(LIVE_ALIAS);
      const versionId = (alias.Properties.FunctionVersion as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      expect(resources[versionId]?.Type).toBe('AWS::Lambda::Version');
      expect(resources[versionId]?.Properties.FunctionName).toEqual({ Ref: logicalId(name) });
    }
    expect(ofType('AWS::Lambda::Version')).toHaveLength(apiNames.length);
    for (const name of stack.background.keys()) {
      expect(JSON.stringify(ofType('AWS::Lambda::Version')), name).not.toContain(`"${logicalId(name)}"`);
    }
  });

  it('gives each API function a CodeDeploy group: 10% for 5 minutes, then all, rolled back on failure, stop or its alarms', () => {
    const groups = ofType('AWS::CodeDeploy::DeploymentGroup');
    expect(groups).toHaveLength(apiNames.length);
    expect(stack.deploymentGroups.size).toBe(apiNames.length);
    expect(DEPLOYMENT_CONFIG.deploymentConfigName).toBe('CodeDeployDefault.LambdaCanary10Percent5Minutes');
    for (const name of apiNames) {
      const cfnAlias = stack.aliases.get(name)?.node.defaultChild as CfnResource;
      const aliasId = Stack.of(cfnAlias).getLogicalId(cfnAlias);
      const alias = resources[aliasId] as Resource;
      const update = (
        alias.UpdatePolicy as { CodeDeployLambdaAliasUpdate: { ApplicationName: unknown; DeploymentGroupName: { Ref: string } } }
      ).CodeDeployLambdaAliasUpdate;
      expect(update.ApplicationName).toEqual({ Ref: applicationId });
      const group = resources[update.DeploymentGroupName.Ref] as Resource;
      expect(group.Properties).toMatchObject({
        ApplicationName: { Ref: applicationId },
        DeploymentConfigName: 'CodeDeployDefault.LambdaCanary10Percent5Minutes',
        DeploymentStyle: { DeploymentOption: 'WITH_TRAFFIC_CONTROL', DeploymentType: 'BLUE_GREEN' },
        ServiceRoleArn: { 'Fn::GetAtt': [roleId, 'Arn'] },
        AutoRollbackConfiguration: {
          Enabled: true,
          Events: ['DEPLOYMENT_FAILURE', 'DEPLOYMENT_STOP_ON_REQUEST', 'DEPLOYMENT_STOP_ON_ALARM'],
        },
      });
      // The alarms: the function's health on its alias (what the canary's traffic goes through), and
      // its route group's answered 5xx (the EMF metric by RouteGroup: no Lambda metric counts those).
      const alarms = group.Properties.AlarmConfiguration as { Enabled: boolean; Alarms: { Name: { Ref: string } }[] };
      expect(alarms.Enabled).toBe(true);
      const texts = alarms.Alarms.map(({ Name }) => {
        const alarm = resources[Name.Ref] as Resource;
        expect(alarm.Type).toBe('AWS::CloudWatch::Alarm');
        return JSON.stringify(alarm.Properties);
      });
      const [health, ...moreHealth] = texts.filter((t) => t.includes(`"${logicalId(name)}"`));
      expect(moreHealth, name).toEqual([]);
      expect(health, name).toContain(`:${LIVE_ALIAS}`);
      const groupAlarms = texts.filter((t) => t !== health);
      expect(groupAlarms, name).toHaveLength(1);
      expect(groupAlarms[0], name).toContain(`{"Name":"RouteGroup","Value":"${routeGroup(name)}"}`);
    }
  });

  it("has one CodeDeploy role for all groups, with AWS's limited Lambda deployment policy only", () => {
    expect(role.Properties.AssumeRolePolicyDocument).toMatchObject({
      Statement: [{ Action: 'sts:AssumeRole', Principal: { Service: 'codedeploy.amazonaws.com' } }],
    });
    expect(role.Properties.ManagedPolicyArns).toEqual([
      { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited']] },
    ]);
    expect(role.Properties).not.toHaveProperty('Policies');
  });
});

describe('all at once (the default)', () => {
  const gradual = synth({ gradualDeploy: 'true' });
  const atOnce = synth();

  it('keeps the versions and aliases (the API still calls live) but has no CodeDeploy: an update moves each alias at once', () => {
    expect(atOnce.ofType('AWS::Lambda::Alias')).toHaveLength(apiNames.length);
    for (const type of ['AWS::CodeDeploy::Application', 'AWS::CodeDeploy::DeploymentGroup']) expect(atOnce.ofType(type), type).toEqual([]);
    expect(atOnce.stack.deploymentGroups.size).toBe(0);
    for (const [id, alias] of atOnce.ofType('AWS::Lambda::Alias')) expect(alias.UpdatePolicy, id).toBeUndefined();
    expect(atOnce.ofType('AWS::IAM::Role').filter(([id]) => id.startsWith('DeploymentRole'))).toEqual([]);
  });

  it('keeps every other logical id, so switching modes replaces no function, alias or route', () => {
    // All but CodeDeploy's application, groups and role, the alarms it rolls back on, and the route
    // groups' composites over those alarms (only gradual deploys have them).
    const ids = (built: typeof gradual) =>
      Object.entries(built.resources)
        .filter(
          ([id, r]) =>
            !r.Type.startsWith('AWS::CodeDeploy::') &&
            !id.startsWith('DeploymentRole') &&
            r.Type !== 'AWS::CloudWatch::Alarm' &&
            !(r.Type === 'AWS::CloudWatch::CompositeAlarm' && id.startsWith('MonitoringFunctions')),
        )
        .map(([id]) => id);
    expect(ids(atOnce).sort()).toEqual(ids(gradual).sort());
  });
});

describe('-c tracing=true', () => {
  const traced = synth({ tracing: 'true' });
  const names = [...traced.stack.endpoints.keys(), ...traced.stack.background.keys()];

  it('turns on active tracing on every function, letting each write traces (X-Ray takes no narrower resource) and nothing more', () => {
    for (const name of names) {
      expect(traced.functionOf(name).Properties.TracingConfig, name).toEqual({ Mode: 'Active' });
      const xray = traced.statementsOf(name).filter((s) => actionsOf(s).some((a) => a.startsWith('xray:')));
      expect(xray.flatMap(actionsOf).sort(), name).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
      expect(
        xray.map((s) => s.Resource),
        name,
      ).toEqual(['*']);
    }
  });

  it('adds no layer and no X-Ray SDK: what runs is the same bundle', () => {
    for (const name of names) expect(traced.functionOf(name).Properties, name).not.toHaveProperty('Layers');
    const manifest = JSON.parse(readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8')) as Record<
      string,
      Record<string, string>
    >;
    const packages = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies });
    expect(packages.filter((p) => /x-?ray|opentelemetry|aws-lambda-powertools\/tracer/i.test(p))).toEqual([]);
    // The same code either way: tracing changes the function's configuration, not its asset.
    const plain = synth();
    for (const name of names) expect(traced.functionOf(name).Properties.Code, name).toEqual(plain.functionOf(name).Properties.Code);
  });
});

/**
 * Two real synths of the whole app, each bundling every function, into two fresh directories in
 * cdk.out (where `cdk synth` writes: the source maps name sources relative to the bundle, so their
 * paths do not depend on where the checkout is). CDK keeps bundles per process, so its cache is
 * cleared between them. Heavy: every function is bundled twice (minutes on two busy cores).
 */
describe('repeated synths', () => {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const parent = join(root, 'cdk.out');
  mkdirSync(parent, { recursive: true });
  const outdirs: string[] = [];
  afterAll(() => {
    for (const dir of outdirs) rmSync(dir, { recursive: true, force: true });
  });

  const synthInto = (): { outdir: string; templates: Record<string, string>; codeKeys: string[]; background: number } => {
    const outdir = mkdtempSync(join(parent, 'repeat-'));
    outdirs.push(outdir);
    AssetStaging.clearAssetHashCache();
    const app = new App({ outdir });
    const { data, api } = rosterStacks(app);
    app.synth();
    // The nested stacks' templates too (`<id><hash>.nested.template.json`), where the API functions are.
    const files = [data, api, ...api.functionStacks.values()].map((s) => s.templateFile);
    const templates = Object.fromEntries(files.map((file) => [file, readFileSync(join(outdir, file), 'utf8')]));
    const functions = Object.values(templates)
      .flatMap((text) => Object.values((JSON.parse(text) as { Resources: Record<string, Resource> }).Resources))
      .filter((r) => r.Type === 'AWS::Lambda::Function');
    return {
      outdir,
      templates,
      codeKeys: functions.map((f) => (f.Properties.Code as { S3Key: string }).S3Key),
      background: api.background.size,
    };
  };

  it(
    'give identical templates: the same asset hashes (S3 keys) and so the same version ids, no path of this checkout in any bundle',
    { timeout: 30 * 60_000 },
    () => {
      const first = synthInto();
      const second = synthInto();
      // And the background functions (test/infra/stack.test.ts names each one).
      expect(first.codeKeys).toHaveLength(apiNames.length + first.background);
      expect(first.codeKeys.every((key) => /^[0-9a-f]{64}\.zip$/.test(key))).toBe(true);
      expect(second.codeKeys).toEqual(first.codeKeys);
      expect(second.templates).toEqual(first.templates);
      for (const key of new Set(first.codeKeys)) {
        const dir = join(first.outdir, `asset.${key.replace(/\.zip$/, '')}`);
        expect(existsSync(dir), dir).toBe(true);
        // Recursive: the compile cache sits in a directory of its own (infra/compile-cache.ts).
        for (const file of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
          if (statSync(join(dir, file)).isDirectory()) continue;
          const text = readFileSync(join(dir, file), 'utf8');
          expect(text.includes(root), `${key}/${file} names ${root}`).toBe(false);
          expect(text.includes(first.outdir), `${key}/${file} names its output directory`).toBe(false);
        }
      }
    },
  );
});

/** The CodeDeploy role: the one role CodeDeploy may assume. */
function deploymentRole(resources: Record<string, Resource>): [string, Resource] {
  const roles = Object.entries(resources).filter(
    ([, r]) => r.Type === 'AWS::IAM::Role' && JSON.stringify(r.Properties.AssumeRolePolicyDocument).includes('codedeploy.amazonaws.com'),
  );
  expect(roles).toHaveLength(1);
  return roles[0] as [string, Resource];
}
