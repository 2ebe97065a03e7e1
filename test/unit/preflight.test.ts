/**
 * `npm run preflight` (scripts/preflight/): each check against AWS SDK clients mocked with
 * aws-sdk-client-mock, since the calls and how their answers are read are what is under test (no
 * AWS account is reachable here); the assemblies are real synths of the app.
 */
import {
  CloudFormationClient,
  CloudFormationServiceException,
  DescribeStacksCommand,
  GetTemplateCommand,
  type Stack,
} from '@aws-sdk/client-cloudformation';
import { GetAccountSettingsCommand, LambdaClient, LambdaServiceException } from '@aws-sdk/client-lambda';
import {
  GetAccountCommand,
  type GetAccountCommandOutput,
  GetEmailIdentityCommand,
  type GetEmailIdentityCommandOutput,
  NotFoundException,
  SESv2Client,
  SESv2ServiceException,
} from '@aws-sdk/client-sesv2';
import { AccessDeniedException as SsmAccessDenied, GetParameterCommand, ParameterNotFound, SSMClient } from '@aws-sdk/client-ssm';
import { ExpiredTokenException, GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { fromEnv } from '@aws-sdk/credential-provider-env';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { MailOptions } from '#infra/options.ts';
import { ROUTES } from '#lib/http/routes.ts';
import { type Assembly, readCdkJson, reasonOf, reservedConcurrency, synthesize, type Template } from '#scripts/preflight/assembly.ts';
import {
  checkAccount,
  checkAlarms,
  checkBootstrap,
  checkConcurrency,
  checkCredentials,
  checkMail,
  checkRegion,
  checkStacks,
  type Deployed,
  readDeployedStacks,
} from '#scripts/preflight/checks.ts';
import { formatFinding } from '#scripts/preflight/findings.ts';
import { type Clients, type Deps, main, parseArguments, resolveRegion } from '#scripts/preflight/main.ts';

const target = { account: '123456789012', region: 'eu-west-1' };
const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' };
const PARAMETER = '/cdk-bootstrap/hnb659fds/version';

/** Real clients with static credentials; each one's `send` answered by its mock. */
const mocked = (config: { credentials?: typeof credentials | ReturnType<typeof fromEnv> } = {}) => {
  const clientConfig = { region: target.region, credentials: config.credentials ?? credentials };
  const clients: Clients = {
    sts: new STSClient(clientConfig),
    ssm: new SSMClient(clientConfig),
    cfn: new CloudFormationClient(clientConfig),
    lambda: new LambdaClient(clientConfig),
    ses: new SESv2Client(clientConfig),
  };
  const mocks = {
    sts: mockClient(clients.sts),
    ssm: mockClient(clients.ssm),
    cfn: mockClient(clients.cfn),
    lambda: mockClient(clients.lambda),
    ses: mockClient(clients.ses),
  };
  return { clients, mocks };
};

const meta = { $metadata: { httpStatusCode: 400 } };
/** CloudFormation's answer for a name without a live stack (an unmodelled query-protocol error). */
const noSuchStack = (name: string) =>
  new CloudFormationServiceException({
    name: 'ValidationError',
    $fault: 'client',
    ...meta,
    message: `Stack with id ${name} does not exist`,
  });
const cfnDenied = (action: string) =>
  new CloudFormationServiceException({
    name: 'AccessDenied',
    $fault: 'client',
    $metadata: { httpStatusCode: 403 },
    message: `User: arn:aws:iam::123456789012:user/ci is not authorized to perform: cloudformation:${action}`,
  });
const unreachable = (host: string) => Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
const stack = (name: string, status: string, extra: Partial<Stack> = {}): Stack => ({
  StackName: name,
  StackStatus: status as Stack['StackStatus'],
  CreationTime: new Date(0),
  ...extra,
});

/** What fromEnv throws when the variables are empty: the SDK's own CredentialsProviderError. */
const noCredentialsProvider = () => fromEnv();

let plain: Assembly;
let reserving: Assembly;
beforeAll(async () => {
  const cdk = await readCdkJson();
  [plain, reserving] = await Promise.all([synthesize(cdk, {}, target), synthesize(cdk, { reservedConcurrency: 'true' }, target)]);
  // Two synths of the whole app: about 15 s on an idle machine, minutes on two cores shared with the suite.
}, 300_000);

beforeEach(() => {
  vi.stubEnv('AWS_ACCESS_KEY_ID', '');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', '');
});
afterEach(() => {
  vi.unstubAllEnvs();
});

describe('the synthesized app', () => {
  it('states the bootstrap version aws-cdk-lib requires, its SSM parameter and the stacks', () => {
    expect(plain.requiredBootstrapVersion).toBeGreaterThanOrEqual(6);
    expect(plain.bootstrapParameter).toBe(PARAMETER);
    expect(plain.stacks.map((s) => s.name)).toContain('Roster');
  });

  it("reserves no concurrency by default, and the route table's with -c reservedConcurrency=true", () => {
    const routeTable = ROUTES.reduce((sum, route) => sum + ('reservedConcurrency' in route ? route.reservedConcurrency : 0), 0);
    expect(routeTable).toBeGreaterThan(0);
    expect(plain.stacks.reduce((sum, s) => sum + reservedConcurrency(s.template), 0)).toBe(0);
    expect(reserving.stacks.reduce((sum, s) => sum + reservedConcurrency(s.template), 0)).toBe(routeTable);
  });

  it("fails with the app's one sentence on a bad option, not its stack trace", async () => {
    await expect(synthesize(await readCdkJson(), { reservedConcurrency: 'yes' }, target)).rejects.toThrow(
      /^context reservedConcurrency must be true or false, not "yes"$/,
    );
  }, 120_000);

  it("reads the reason out of Node's and aws-cdk-lib's error output", () => {
    expect(
      reasonOf(
        'file:///x/options.ts:86\n  throw new Error(...)\n        ^\n\nError: context x must be y\n    at flag (file:///x)\n\nNode.js v24.21.0\n',
      ),
    ).toBe('context x must be y');
    expect(
      reasonOf('node:internal/modules/run_main:107\n\n«CannotFindEntryFile» Cannot find entry file at /f.ts\n    at new Endpoint\n'),
    ).toBe('Cannot find entry file at /f.ts');
  });
});

describe('arguments and region', () => {
  it('takes -c key=value (values may hold =), --region and --profile', () => {
    expect(
      parseArguments([
        '-c',
        'sesDomain=example.com',
        '--context',
        'publicUrl=https://x.example/?a=b',
        '--region',
        'eu-west-1',
        '--profile',
        'ops',
      ]),
    ).toEqual({
      context: { sesDomain: 'example.com', publicUrl: 'https://x.example/?a=b' },
      region: 'eu-west-1',
      profile: 'ops',
      help: false,
    });
    expect(() => parseArguments(['-c', 'sesDomain'])).toThrow('-c takes key=value, not "sesDomain"');
    expect(() => parseArguments(['--regoin', 'x'])).toThrow(/Unknown option '--regoin'/);
  });

  it('finds the region as the CDK CLI does: --region, AWS_REGION before AWS_DEFAULT_REGION, then the profile', async () => {
    const noArgs = parseArguments([]);
    const profile = vi.fn(async () => 'ap-south-1');
    expect(await resolveRegion(noArgs, { AWS_DEFAULT_REGION: 'us-west-2', AWS_REGION: 'eu-central-1' }, profile)).toEqual({
      region: 'eu-central-1',
      source: 'AWS_REGION',
    });
    expect(await resolveRegion(noArgs, { AWS_DEFAULT_REGION: 'us-west-2' }, profile)).toMatchObject({
      region: 'us-west-2',
      source: 'AWS_DEFAULT_REGION',
    });
    expect(profile).not.toHaveBeenCalled();
    expect(await resolveRegion(parseArguments(['--profile', 'ops']), {}, profile)).toEqual({ region: 'ap-south-1', source: 'profile ops' });
    expect(profile).toHaveBeenCalledWith('ops');
    expect(await resolveRegion(parseArguments(['--region', 'eu-west-1']), { AWS_REGION: 'us-east-2' }, profile)).toEqual({
      region: 'eu-west-1',
      source: '--region',
      deployRegion: 'us-east-2',
    });
    expect(await resolveRegion(noArgs, {}, async () => undefined)).toEqual({ region: undefined, source: 'profile default' });
  });

  it('fails without a region, warns when cdk deploy would go elsewhere, and says how to deploy to --region', () => {
    expect(checkRegion({ region: undefined, source: 'profile default' })).toMatchObject({
      level: 'fail',
      message: 'no region set: cdk deploy would fall back to us-east-1',
    });
    expect(checkRegion({ region: 'eu-west-1', source: '--region', deployRegion: 'us-east-2' })).toMatchObject({
      level: 'warn',
      fix: 'AWS_REGION=eu-west-1 npx cdk deploy',
    });
    expect(checkRegion({ region: 'eu-west-1', source: '--region', deployRegion: undefined })).toMatchObject({
      level: 'ok',
      message: expect.stringContaining('AWS_REGION=eu-west-1 npx cdk deploy'),
    });
    expect(checkRegion({ region: 'eu-west-1', source: 'AWS_REGION', deployRegion: 'eu-west-1' })).toEqual({
      level: 'ok',
      check: 'region',
      message: 'eu-west-1 (AWS_REGION)',
      fix: undefined,
    });
  });
});

describe('credentials and account', () => {
  it("turns the SDK's CredentialsProviderError into one fail line", async () => {
    const { clients } = mocked({ credentials: noCredentialsProvider() });
    const result = await checkCredentials(clients.sts, undefined);
    expect(result).toMatchObject({
      level: 'fail',
      check: 'credentials',
      message: expect.stringMatching(/^no AWS credentials found \(environment,/),
    });
    expect(await checkCredentials(clients.sts, 'ops')).toMatchObject({
      message: expect.stringMatching(/^no AWS credentials found for profile ops /),
    });
    expect(result && formatFinding(result)).not.toContain('\n');
    expect(await checkCredentials(mocked().clients.sts, undefined)).toBeUndefined();
  });

  it('asks STS who the caller is', async () => {
    const { clients, mocks } = mocked();
    mocks.sts.on(GetCallerIdentityCommand).resolves({ Account: target.account, Arn: 'arn:aws:iam::123456789012:user/ops', UserId: 'AIDA' });
    expect(await checkAccount(clients.sts, target.region)).toEqual({
      account: target.account,
      finding: { level: 'ok', check: 'account', message: '123456789012 as arn:aws:iam::123456789012:user/ops', fix: undefined },
    });
    expect(mocks.sts.commandCalls(GetCallerIdentityCommand).map((call) => call.args[0].input)).toEqual([{}]);
  });

  it('fails clearly on expired, missing or rejected credentials and on no network', async () => {
    const providerError = await noCredentialsProvider()().then(
      () => new Error('fromEnv found credentials'),
      (error: unknown) => error as Error,
    );
    expect(providerError.name).toBe('CredentialsProviderError');
    const { clients, mocks } = mocked();
    mocks.sts
      .on(GetCallerIdentityCommand)
      .rejectsOnce(new ExpiredTokenException({ message: 'The security token included in the request is expired', ...meta }))
      .rejectsOnce(providerError)
      .rejectsOnce(Object.assign(new Error('The security token included in the request is invalid.'), { name: 'InvalidClientTokenId' }))
      .rejectsOnce(unreachable('sts.eu-west-9.amazonaws.com'));
    expect((await checkAccount(clients.sts, target.region)).finding).toMatchObject({
      level: 'fail',
      message: 'the AWS credentials have expired',
    });
    expect((await checkAccount(clients.sts, target.region)).finding).toMatchObject({ level: 'fail', message: 'no AWS credentials found' });
    expect((await checkAccount(clients.sts, 'af-south-1')).finding.message).toContain(
      'af-south-1 is an opt-in region not enabled for the account',
    );
    expect((await checkAccount(clients.sts, 'eu-west-9')).finding).toMatchObject({
      level: 'fail',
      message: expect.stringContaining('cannot reach STS in eu-west-9'),
    });
  });
});

describe('CDK bootstrap', () => {
  const toolkit = (status = 'UPDATE_COMPLETE', version = '30') => ({
    Stacks: [stack('CDKToolkit', status, { Outputs: [{ OutputKey: 'BootstrapVersion', OutputValue: version }] })],
  });

  it('reads the version from the SSM parameter the templates check, and the toolkit stack', async () => {
    const { clients, mocks } = mocked();
    mocks.ssm.on(GetParameterCommand).resolves({ Parameter: { Name: PARAMETER, Value: '30' } });
    mocks.cfn.on(DescribeStacksCommand).resolves(toolkit());
    const result = await checkBootstrap(clients.ssm, clients.cfn, plain, 'CDKToolkit', target);
    expect(result).toMatchObject({
      level: 'ok',
      message: `version 30 in eu-west-1 (this app needs ${plain.requiredBootstrapVersion} or later)`,
    });
    expect(mocks.ssm.commandCalls(GetParameterCommand).map((call) => call.args[0].input)).toEqual([{ Name: PARAMETER }]);
    expect(mocks.cfn.commandCalls(DescribeStacksCommand).map((call) => call.args[0].input)).toEqual([{ StackName: 'CDKToolkit' }]);
  });

  it('fails when the version is older than the app needs, with the command that upgrades it', async () => {
    const { clients, mocks } = mocked();
    mocks.ssm.on(GetParameterCommand).resolves({ Parameter: { Value: '5' } });
    mocks.cfn.on(DescribeStacksCommand).resolves(toolkit('UPDATE_COMPLETE', '5'));
    expect(await checkBootstrap(clients.ssm, clients.cfn, { ...plain, requiredBootstrapVersion: 6 }, 'CDKToolkit', target)).toEqual({
      level: 'fail',
      check: 'bootstrap',
      message: 'bootstrap version 5 in eu-west-1, but this app needs 6 or later: CloudFormation rejects the templates',
      fix: 'npx cdk bootstrap aws://123456789012/eu-west-1 (upgrades it in place)',
    });
  });

  it('fails when the region is not bootstrapped, or with another qualifier', async () => {
    const { clients, mocks } = mocked();
    mocks.ssm.on(GetParameterCommand).rejects(new ParameterNotFound({ message: '', ...meta }));
    mocks.cfn.on(DescribeStacksCommand).rejectsOnce(noSuchStack('CDKToolkit'));
    expect(await checkBootstrap(clients.ssm, clients.cfn, plain, 'CDKToolkit', target)).toMatchObject({
      level: 'fail',
      message: `eu-west-1 is not bootstrapped for the CDK (no SSM parameter ${PARAMETER})`,
      fix: 'npx cdk bootstrap aws://123456789012/eu-west-1',
    });
    mocks.cfn.on(DescribeStacksCommand).resolves(toolkit());
    expect(await checkBootstrap(clients.ssm, clients.cfn, plain, 'CDKToolkit', target)).toMatchObject({
      level: 'fail',
      message: expect.stringContaining('bootstrapped with another qualifier'),
    });
  });

  it('fails on a broken or busy toolkit stack', async () => {
    const { clients, mocks } = mocked();
    mocks.ssm.on(GetParameterCommand).resolves({ Parameter: { Value: '30' } });
    mocks.cfn.on(DescribeStacksCommand).resolvesOnce(toolkit('UPDATE_ROLLBACK_FAILED')).resolvesOnce(toolkit('UPDATE_IN_PROGRESS'));
    expect(await checkBootstrap(clients.ssm, clients.cfn, plain, 'CDKToolkit', target)).toMatchObject({
      level: 'fail',
      message: 'CDKToolkit is UPDATE_ROLLBACK_FAILED',
    });
    expect(await checkBootstrap(clients.ssm, clients.cfn, plain, 'CDKToolkit', target)).toMatchObject({
      level: 'fail',
      message: 'CDKToolkit is UPDATE_IN_PROGRESS',
    });
  });

  it("falls back to the stack's output without ssm:GetParameter, and warns naming it when neither can be read", async () => {
    const { clients, mocks } = mocked();
    mocks.ssm.on(GetParameterCommand).rejects(
      new SsmAccessDenied({
        message: 'not authorized to perform: ssm:GetParameter',
        Message: 'not authorized to perform: ssm:GetParameter',
        ...meta,
      }),
    );
    mocks.cfn
      .on(DescribeStacksCommand)
      .resolvesOnce(toolkit('UPDATE_COMPLETE', '30'))
      .rejectsOnce(noSuchStack('CDKToolkit'))
      .rejectsOnce(cfnDenied('DescribeStacks'));
    expect(await checkBootstrap(clients.ssm, clients.cfn, plain, 'CDKToolkit', target)).toMatchObject({
      level: 'ok',
      message: expect.stringMatching(/^version 30 /),
    });
    expect(await checkBootstrap(clients.ssm, clients.cfn, plain, 'CDKToolkit', target)).toMatchObject({
      level: 'fail',
      message: 'eu-west-1 is not bootstrapped for the CDK (no CDKToolkit stack)',
    });
    expect(await checkBootstrap(clients.ssm, clients.cfn, plain, 'CDKToolkit', target)).toEqual({
      level: 'warn',
      check: 'bootstrap',
      message: `not checked: access denied to ssm:GetParameter on ${PARAMETER}`,
      fix: `allow ssm:GetParameter on ${PARAMETER} to these credentials (README, Deploy: what preflight needs)`,
    });
  });
});

describe("the app's stacks in the account", () => {
  const names = ['RosterData', 'Roster'];
  const retainedTable: Template = {
    Resources: { OldTable: { Type: 'AWS::DynamoDB::Table', DeletionPolicy: 'Retain' }, OldFn: { Type: 'AWS::Lambda::Function' } },
  };

  it('describes each stack, and reads the template only of those that exist', async () => {
    const { clients, mocks } = mocked();
    mocks.cfn.on(DescribeStacksCommand, { StackName: 'RosterData' }).rejects(noSuchStack('RosterData'));
    mocks.cfn.on(DescribeStacksCommand, { StackName: 'Roster' }).resolves({ Stacks: [stack('Roster', 'UPDATE_COMPLETE')] });
    mocks.cfn.on(GetTemplateCommand).resolves({ TemplateBody: JSON.stringify(retainedTable) });
    const deployed = await readDeployedStacks(clients.cfn, names);
    expect(deployed).toEqual([
      { name: 'RosterData', state: 'absent' },
      { name: 'Roster', state: 'present', status: 'UPDATE_COMPLETE', reason: undefined, template: retainedTable },
    ]);
    expect(mocks.cfn.commandCalls(DescribeStacksCommand).map((call) => call.args[0].input)).toEqual([
      { StackName: 'RosterData' },
      { StackName: 'Roster' },
    ]);
    expect(mocks.cfn.commandCalls(GetTemplateCommand).map((call) => call.args[0].input)).toEqual([{ StackName: 'Roster' }]);
  });

  it('passes new and complete stacks, and fails one whose deploy would drop a retained resource', () => {
    const present = (status: string, template?: Template): Deployed => ({
      name: 'Roster',
      state: 'present',
      status,
      reason: undefined,
      template,
    });
    expect(checkStacks([{ name: 'RosterData', state: 'absent' }], plain, target)).toEqual([
      { level: 'ok', check: 'stack RosterData', message: 'not deployed yet: cdk deploy creates it', fix: undefined },
    ]);
    expect(checkStacks([present('UPDATE_COMPLETE', { Resources: {} })], plain, target)).toMatchObject([
      { level: 'ok', message: 'UPDATE_COMPLETE: cdk deploy updates it' },
    ]);
    expect(checkStacks([present('UPDATE_COMPLETE', retainedTable)], plain, target)).toMatchObject([
      {
        level: 'fail',
        check: 'stack Roster',
        message: expect.stringMatching(/^this deploy removes OldTable \(AWS::DynamoDB::Table, DeletionPolicy Retain\) from the stack/),
      },
    ]);
  });

  it('warns on a failed first create (cdk deploy replaces it) and fails on busy or failed stacks with the command to run', () => {
    const at = (status: string, reason?: string): Deployed[] => [
      { name: 'Roster', state: 'present', status, reason, template: { Resources: {} } },
    ];
    expect(checkStacks(at('ROLLBACK_COMPLETE'), plain, target)).toMatchObject([
      { level: 'warn', message: expect.stringContaining('cdk deploy deletes it and creates it again') },
    ]);
    expect(checkStacks(at('UPDATE_ROLLBACK_FAILED', 'Resource handler returned message'), plain, target)).toEqual([
      {
        level: 'fail',
        check: 'stack Roster',
        message: 'is UPDATE_ROLLBACK_FAILED (Resource handler returned message): it takes no update',
        fix: 'aws cloudformation continue-update-rollback --stack-name Roster --region eu-west-1',
      },
    ]);
    expect(checkStacks(at('UPDATE_IN_PROGRESS'), plain, target)).toMatchObject([
      { level: 'fail', message: 'is UPDATE_IN_PROGRESS: a deploy now fails' },
    ]);
    expect(checkStacks(at('DELETE_FAILED'), plain, target)).toMatchObject([
      { level: 'fail', fix: expect.stringContaining('aws cloudformation delete-stack --stack-name Roster') },
    ]);
  });

  it('warns, naming the permission, when DescribeStacks or GetTemplate is denied', async () => {
    const { clients, mocks } = mocked();
    mocks.cfn.on(DescribeStacksCommand, { StackName: 'RosterData' }).rejects(cfnDenied('DescribeStacks'));
    mocks.cfn.on(DescribeStacksCommand, { StackName: 'Roster' }).resolves({ Stacks: [stack('Roster', 'CREATE_COMPLETE')] });
    mocks.cfn.on(GetTemplateCommand).rejects(cfnDenied('GetTemplate'));
    expect(checkStacks(await readDeployedStacks(clients.cfn, names), plain, target)).toMatchObject([
      { level: 'warn', check: 'stack RosterData', message: 'not checked: access denied to cloudformation:DescribeStacks' },
      { level: 'ok', check: 'stack Roster', message: 'CREATE_COMPLETE: cdk deploy updates it' },
      { level: 'warn', check: 'stack Roster', message: 'not checked: access denied to cloudformation:GetTemplate' },
    ]);
  });
});

describe('Lambda concurrency', () => {
  const settings = (quota: number, unreserved = quota) => ({
    AccountLimit: { ConcurrentExecutions: quota, UnreservedConcurrentExecutions: unreserved },
  });
  const none: Deployed[] = [];

  it('passes a stack that reserves nothing, and asks GetAccountSettings with no input', async () => {
    const { clients, mocks } = mocked();
    mocks.lambda.on(GetAccountSettingsCommand).resolves(settings(1000));
    expect(await checkConcurrency(clients.lambda, plain, none, target)).toEqual([
      { level: 'ok', check: 'concurrency', message: 'the stacks reserve none; account quota 1000, 1000 unreserved', fix: undefined },
    ]);
    expect(mocks.lambda.commandCalls(GetAccountSettingsCommand).map((call) => call.args[0].input)).toEqual([{}]);
  });

  it('passes reservations that leave 100 unreserved, and fails (with the quota to ask for) those that do not', async () => {
    const { clients, mocks } = mocked();
    mocks.lambda.on(GetAccountSettingsCommand).resolvesOnce(settings(140)).resolvesOnce(settings(139)).resolvesOnce(settings(3000, 120));
    expect(await checkConcurrency(clients.lambda, reserving, none, target)).toMatchObject([
      { level: 'ok', message: "the stacks reserve 40 of the account's 140, leaving 100 unreserved (Lambda keeps at least 100)" },
    ]);
    expect(await checkConcurrency(clients.lambda, reserving, none, target)).toEqual([
      {
        level: 'fail',
        check: 'concurrency',
        message:
          'the stacks reserve 40 and Lambda keeps 100 unreserved, but the account has only 139 to give (quota 139): the deploy fails and rolls back',
        fix: 'deploy without -c reservedConcurrency=true, or raise the quota: aws service-quotas request-service-quota-increase --service-code lambda --quota-code L-B99A9384 --desired-value 1000 --region eu-west-1',
      },
    ]);
    // Other functions of the account hold 2,880: 3,020 is what leaves 100 free after these 40.
    expect((await checkConcurrency(clients.lambda, reserving, none, target))[0]?.fix).toContain('--desired-value 3020 ');
  });

  it('counts the reservations the deployed stack holds now as free for its update', async () => {
    const { clients, mocks } = mocked();
    mocks.lambda.on(GetAccountSettingsCommand).resolves(settings(140, 100));
    const roster = reserving.stacks.find((s) => reservedConcurrency(s.template) > 0);
    if (!roster) throw new Error('no stack reserves concurrency');
    const deployed: Deployed[] = [
      { name: roster.name, state: 'present', status: 'UPDATE_COMPLETE', reason: undefined, template: roster.template },
    ];
    expect(await checkConcurrency(clients.lambda, reserving, deployed, target)).toMatchObject([
      { level: 'ok', message: expect.stringContaining('leaving 100 unreserved') },
    ]);
  });

  it("warns about a new account's low quota with the Service Quotas request", async () => {
    const { clients, mocks } = mocked();
    mocks.lambda.on(GetAccountSettingsCommand).resolves(settings(10));
    expect(await checkConcurrency(clients.lambda, plain, none, target)).toMatchObject([
      { level: 'ok' },
      {
        level: 'warn',
        check: 'quota',
        fix: 'aws service-quotas request-service-quota-increase --service-code lambda --quota-code L-B99A9384 --desired-value 1000 --region eu-west-1',
      },
    ]);
  });

  it('warns, naming lambda:GetAccountSettings, when it is denied', async () => {
    const { clients, mocks } = mocked();
    mocks.lambda.on(GetAccountSettingsCommand).rejects(
      new LambdaServiceException({
        name: 'AccessDeniedException',
        $fault: 'client',
        $metadata: { httpStatusCode: 403 },
        message: 'not authorized',
      }),
    );
    expect(await checkConcurrency(clients.lambda, plain, none, target)).toMatchObject([
      { level: 'warn', check: 'concurrency', message: 'not checked: access denied to lambda:GetAccountSettings' },
    ]);
  });
});

describe('mail', () => {
  const production: GetAccountCommandOutput = {
    ...meta,
    ProductionAccessEnabled: true,
    SendingEnabled: true,
    EnforcementStatus: 'HEALTHY',
    SendQuota: { Max24HourSend: 50000, MaxSendRate: 14, SentLast24Hours: 0 },
  };
  const sandbox: GetAccountCommandOutput = {
    ...production,
    ProductionAccessEnabled: false,
    SendQuota: { Max24HourSend: 200, MaxSendRate: 1, SentLast24Hours: 0 },
  };
  const verified: GetEmailIdentityCommandOutput = {
    ...meta,
    IdentityType: 'DOMAIN',
    VerifiedForSendingStatus: true,
    VerificationStatus: 'SUCCESS',
    DkimAttributes: { SigningEnabled: true, Status: 'SUCCESS' },
  };
  const existing: MailOptions = {
    transport: 'ses',
    identity: 'example.com',
    createIdentity: false,
    from: 'Roster <no-reply@example.com>',
    publicUrl: undefined,
  };
  const created: MailOptions = { ...existing, createIdentity: true };
  const sesError = (name: string) =>
    new SESv2ServiceException({ name, $fault: 'client', $metadata: { httpStatusCode: 403 }, message: name });

  it('warns that the log transport sends nothing, and still checks that SES answers in the region', async () => {
    const { clients, mocks } = mocked();
    mocks.ses.on(GetAccountCommand).resolvesOnce(sandbox).rejectsOnce(unreachable('email.xx-east-1.amazonaws.com'));
    expect(await checkMail(clients.ses, { transport: 'log', publicUrl: undefined }, [], target)).toMatchObject([
      { level: 'warn', check: 'mail', message: expect.stringContaining('log transport') },
    ]);
    expect(mocks.ses.commandCalls(GetAccountCommand).map((call) => call.args[0].input)).toEqual([{}]);
    expect(await checkMail(clients.ses, { transport: 'log', publicUrl: undefined }, [], target)).toMatchObject([
      { check: 'mail' },
      { level: 'warn', check: 'ses', message: expect.stringContaining('cannot reach SES in eu-west-1') },
    ]);
    expect(mocks.ses.commandCalls(GetEmailIdentityCommand)).toHaveLength(0);
  });

  it('passes a verified identity with production access, asking for exactly that identity', async () => {
    const { clients, mocks } = mocked();
    mocks.ses.on(GetAccountCommand).resolves(production);
    mocks.ses.on(GetEmailIdentityCommand).resolves(verified);
    expect(await checkMail(clients.ses, existing, [], target)).toEqual([
      { level: 'ok', check: 'ses', message: 'production access in eu-west-1, 50000 messages a day, 14 a second', fix: undefined },
      { level: 'ok', check: 'ses identity', message: 'example.com is verified for sending, DKIM signing', fix: undefined },
    ]);
    expect(mocks.ses.commandCalls(GetEmailIdentityCommand).map((call) => call.args[0].input)).toEqual([{ EmailIdentity: 'example.com' }]);
  });

  it('warns about the sandbox (and a pending request), fails paused or shut-down sending', async () => {
    const { clients, mocks } = mocked();
    mocks.ses.on(GetEmailIdentityCommand).resolves(verified);
    mocks.ses
      .on(GetAccountCommand)
      .resolvesOnce(sandbox)
      .resolvesOnce({ ...sandbox, Details: { ReviewDetails: { Status: 'PENDING', CaseId: '1234' } } })
      .resolvesOnce({ ...production, SendingEnabled: false })
      .resolvesOnce({ ...production, EnforcementStatus: 'SHUTDOWN' });
    expect((await checkMail(clients.ses, existing, [], target))[0]).toEqual({
      level: 'warn',
      check: 'ses',
      message: 'eu-west-1 is in the SES sandbox: mail reaches only verified addresses, 200 messages a day, 1 a second',
      fix: 'request production access: docs/operations.md#leave-the-ses-sandbox',
    });
    expect((await checkMail(clients.ses, existing, [], target))[0]?.message).toContain(
      'production access requested (case 1234), under review',
    );
    expect((await checkMail(clients.ses, existing, [], target))[0]).toMatchObject({
      level: 'fail',
      fix: 'aws sesv2 put-account-sending-attributes --sending-enabled --region eu-west-1',
    });
    expect((await checkMail(clients.ses, existing, [], target))[0]).toMatchObject({
      level: 'fail',
      message: expect.stringContaining('SHUTDOWN'),
    });
  });

  it('fails an identity that is missing or unverified, warns about one without DKIM', async () => {
    const { clients, mocks } = mocked();
    mocks.ses.on(GetAccountCommand).resolves(production);
    mocks.ses
      .on(GetEmailIdentityCommand)
      .rejectsOnce(new NotFoundException({ message: 'Email identity example.com does not exist.', ...meta }))
      .resolvesOnce({
        ...verified,
        VerifiedForSendingStatus: false,
        VerificationStatus: 'PENDING',
        DkimAttributes: { Status: 'PENDING', SigningEnabled: true },
      })
      .resolvesOnce({ ...verified, DkimAttributes: { Status: 'NOT_STARTED', SigningEnabled: false } });
    expect((await checkMail(clients.ses, existing, [], target))[1]).toMatchObject({
      level: 'fail',
      message: 'example.com is not an SES identity in eu-west-1: SES refuses its mail',
      fix: expect.stringContaining('-c sesDomain=example.com'),
    });
    expect((await checkMail(clients.ses, existing, [], target))[1]).toMatchObject({
      level: 'fail',
      message: 'example.com is not verified for sending (verification PENDING, DKIM PENDING): SES refuses its mail',
      fix: expect.stringContaining('DKIM CNAME'),
    });
    expect((await checkMail(clients.ses, existing, [], target))[1]).toMatchObject({
      level: 'warn',
      message: expect.stringContaining('DKIM is not signing'),
    });
  });

  it('with -c sesDomain: warns that the deploy creates it, fails when it exists outside the stacks, passes it when a stack owns it', async () => {
    const { clients, mocks } = mocked();
    mocks.ses.on(GetAccountCommand).resolves(production);
    mocks.ses
      .on(GetEmailIdentityCommand)
      .rejectsOnce(new NotFoundException({ message: 'not found', ...meta }))
      .resolves(verified);
    expect((await checkMail(clients.ses, created, [], target))[1]).toMatchObject({
      level: 'warn',
      message: 'example.com is not in SES yet: the deploy creates it, and mail fails until SES sees its DKIM records',
    });
    expect((await checkMail(clients.ses, created, [], target))[1]).toMatchObject({
      level: 'fail',
      fix: '-c sesIdentity=example.com instead of -c sesDomain=example.com (use the existing identity)',
    });
    const owner: Deployed = {
      name: 'RosterData',
      state: 'present',
      status: 'CREATE_COMPLETE',
      reason: undefined,
      template: { Resources: { Id: { Type: 'AWS::SES::EmailIdentity', Properties: { EmailIdentity: 'Example.com' } } } },
    };
    expect((await checkMail(clients.ses, created, [owner], target))[1]).toMatchObject({
      level: 'ok',
      message: 'example.com is verified for sending, DKIM signing',
    });
  });

  it('warns, naming the permissions, when SES calls are denied', async () => {
    const { clients, mocks } = mocked();
    mocks.ses.on(GetAccountCommand).rejects(sesError('AccessDeniedException'));
    mocks.ses.on(GetEmailIdentityCommand).rejects(sesError('AccessDeniedException'));
    expect(await checkMail(clients.ses, existing, [], target)).toMatchObject([
      { level: 'warn', check: 'ses', message: 'not checked: access denied to ses:GetAccount' },
      { level: 'warn', check: 'ses identity', message: 'not checked: access denied to ses:GetEmailIdentity' },
    ]);
  });
});

describe('alarms', () => {
  it('warns when no one is subscribed', () => {
    expect(checkAlarms(undefined)).toMatchObject({ level: 'warn', fix: expect.stringContaining('-c alarmEmail=') });
    expect(checkAlarms('ops@example.com')).toMatchObject({ level: 'ok' });
  });
});

describe('the CLI', () => {
  /** main with these clients, the real cdk.json, the synthesized default assembly, and its output captured. */
  const run = async (argv: string[], clients: Clients, env: Deps['env'] = { AWS_REGION: target.region }) => {
    const lines: string[] = [];
    const synth = vi.fn(async () => plain);
    const code = await main(argv, {
      clients: () => clients,
      profileRegion: async () => undefined,
      cdkJson: readCdkJson,
      synthesize: synth,
      print: (line) => lines.push(line),
      env,
    });
    return { code, lines, synth };
  };

  /** An account where everything passes: bootstrapped, nothing deployed, quota 1000, SES out of the sandbox. */
  const healthy = () => {
    const { clients, mocks } = mocked();
    mocks.sts.on(GetCallerIdentityCommand).resolves({ Account: target.account, Arn: 'arn:aws:iam::123456789012:user/ops' });
    mocks.ssm.on(GetParameterCommand).resolves({ Parameter: { Value: '30' } });
    mocks.cfn.on(DescribeStacksCommand).callsFake((input: { StackName: string }) => {
      if (input.StackName === 'CDKToolkit') return { Stacks: [stack('CDKToolkit', 'UPDATE_COMPLETE')] };
      throw noSuchStack(input.StackName);
    });
    mocks.lambda
      .on(GetAccountSettingsCommand)
      .resolves({ AccountLimit: { ConcurrentExecutions: 1000, UnreservedConcurrentExecutions: 1000 } });
    mocks.ses.on(GetAccountCommand).resolves({
      ProductionAccessEnabled: true,
      SendingEnabled: true,
      EnforcementStatus: 'HEALTHY',
      SendQuota: { Max24HourSend: 50000, MaxSendRate: 14, SentLast24Hours: 0 },
    });
    mocks.ses
      .on(GetEmailIdentityCommand)
      .resolves({ IdentityType: 'DOMAIN', VerifiedForSendingStatus: true, DkimAttributes: { Status: 'SUCCESS', SigningEnabled: true } });
    return { clients, mocks };
  };

  it('without credentials prints one fail line, calls nothing, and exits 1', async () => {
    const { clients, mocks } = mocked({ credentials: noCredentialsProvider() });
    const { code, lines, synth } = await run([], clients, {});
    expect(code).toBe(1);
    expect(lines).toEqual([expect.stringMatching(/^fail {2}credentials {6}no AWS credentials found .*; fix: configure credentials/)]);
    for (const mock of Object.values(mocks)) expect(mock.calls()).toHaveLength(0);
    expect(synth).not.toHaveBeenCalled();
  });

  it('prints one line per finding and exits 0 when nothing fails', async () => {
    const { clients } = healthy();
    const { code, lines } = await run(['-c', 'sesIdentity=example.com', '-c', 'alarmEmail=ops@example.com'], clients);
    expect(lines).toEqual([
      'ok    region           eu-west-1 (AWS_REGION)',
      'ok    account          123456789012 as arn:aws:iam::123456789012:user/ops',
      `ok    bootstrap        version 30 in eu-west-1 (this app needs ${plain.requiredBootstrapVersion} or later)`,
      ...plain.stacks.map((s) =>
        formatFinding({ level: 'ok', check: `stack ${s.name}`, message: 'not deployed yet: cdk deploy creates it' }),
      ),
      'ok    concurrency      the stacks reserve none; account quota 1000, 1000 unreserved',
      'ok    ses              production access in eu-west-1, 50000 messages a day, 14 a second',
      'ok    ses identity     example.com is verified for sending, DKIM signing',
      'ok    alarms           alarms are e-mailed to ops@example.com once the subscription AWS mails after the deploy is confirmed',
    ]);
    expect(code).toBe(0);
  });

  it('exits 1 when a check fails, and turns a denied call into a warn without stopping', async () => {
    const { clients, mocks } = healthy();
    mocks.ssm.on(GetParameterCommand).resolves({ Parameter: { Value: '1' } });
    mocks.lambda.on(GetAccountSettingsCommand).rejects(
      new LambdaServiceException({
        name: 'AccessDeniedException',
        $fault: 'client',
        $metadata: { httpStatusCode: 403 },
        message: 'denied',
      }),
    );
    const { code, lines } = await run([], clients);
    expect(code).toBe(1);
    expect(lines.filter((line) => /^(fail|warn)/.test(line))).toEqual([
      expect.stringMatching(/^fail {2}bootstrap {8}bootstrap version 1 in eu-west-1/),
      'warn  concurrency      not checked: access denied to lambda:GetAccountSettings; fix: allow lambda:GetAccountSettings to these credentials (README, Deploy: what preflight needs)',
      expect.stringMatching(/^warn {2}mail {13}no mail settings/),
      expect.stringMatching(/^warn {2}alarms /),
    ]);
  });

  it('stops at a bad option with its sentence, before synthesizing', async () => {
    const { clients } = healthy();
    const { code, lines, synth } = await run(['-c', 'mailFrom=ops@example.com'], clients);
    expect(code).toBe(1);
    expect(lines.at(-1)).toBe(
      'fail  options          context mailFrom needs sesDomain or sesIdentity, the SES identity to send it through; fix: README, Deploy: the options',
    );
    expect(synth).not.toHaveBeenCalled();
  });

  it('fails without a region, and on bad arguments', async () => {
    const { clients, mocks } = healthy();
    const noRegion = await run([], clients, {});
    expect(noRegion).toMatchObject({ code: 1, lines: [expect.stringMatching(/^fail {2}region {11}no region set/)] });
    expect(mocks.sts.calls()).toHaveLength(0);
    const bad = await run(['--bogus'], clients);
    expect(bad).toMatchObject({
      code: 1,
      lines: [expect.stringMatching(/^fail {2}usage {12}Unknown option '--bogus'; fix: npm run preflight -- /)],
    });
  });
});
