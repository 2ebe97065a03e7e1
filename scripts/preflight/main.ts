/**
 * `npm run preflight -- [-c key=value ...] [--region r] [--profile p]`: before `cdk deploy`, with
 * the operator's credentials, checks what a first deploy (or an upgrade) into this account and
 * region runs into, and prints one line per finding with its fix. Exit code 1 when any fails.
 * Order: credentials, region and account first (nothing else can be asked without them), then the
 * app itself (options, synth), then the account's state against what the synth would deploy.
 */
import { parseArgs } from 'node:util';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import { SSMClient } from '@aws-sdk/client-ssm';
import { STSClient } from '@aws-sdk/client-sts';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { App } from 'aws-cdk-lib';
import { type DeployOptions, deployOptions } from '#infra/options.ts';
import { type Assembly, type CdkJson, type Context, readCdkJson, synthesize } from './assembly.ts';
import {
  checkAccount,
  checkAlarms,
  checkBootstrap,
  checkConcurrency,
  checkCredentials,
  checkMail,
  checkRegion,
  checkStacks,
  readDeployedStacks,
  type RegionSource,
} from './checks.ts';
import { describeError, type Finding, finding, formatFinding, type Target } from './findings.ts';

export const USAGE = 'npm run preflight -- [-c key=value ...] [--region <region>] [--profile <profile>]';

export interface Clients {
  sts: STSClient;
  ssm: SSMClient;
  cfn: CloudFormationClient;
  lambda: LambdaClient;
  ses: SESv2Client;
}

export interface ClientConfig {
  region: string | undefined;
  profile: string | undefined;
}

/** Everything main touches outside itself: the tests pass mocked clients and their own output. */
export interface Deps {
  clients(config: ClientConfig): Clients;
  /** The profile's region in the shared config file (as the SDK reads it), or undefined. */
  profileRegion(profile: string | undefined): Promise<string | undefined>;
  cdkJson(): Promise<CdkJson>;
  synthesize(cdk: CdkJson, context: Context, target: Target): Promise<Assembly>;
  print(line: string): void;
  env: Record<string, string | undefined>;
}

export interface Args {
  /** `-c key=value`, as `cdk deploy` takes them (strings). */
  context: Record<string, string>;
  region: string | undefined;
  profile: string | undefined;
  help: boolean;
}

export const parseArguments = (argv: readonly string[]): Args => {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      context: { type: 'string', short: 'c', multiple: true },
      region: { type: 'string' },
      profile: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  });
  const context: Record<string, string> = {};
  for (const pair of values.context ?? []) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new Error(`-c takes key=value, not ${JSON.stringify(pair)}`);
    context[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return { context, region: values.region, profile: values.profile, help: values.help ?? false };
};

/** The CDK CLI's region variables, in its order (it reads the profile's region after them). */
export const REGION_VARIABLES = ['AWS_REGION', 'AMAZON_REGION', 'AWS_DEFAULT_REGION', 'AMAZON_DEFAULT_REGION'] as const;

/** The region to check, and the one `cdk deploy` would use when --region names another. */
export const resolveRegion = async (args: Args, env: Deps['env'], profileRegion: Deps['profileRegion']): Promise<RegionSource> => {
  const variable = REGION_VARIABLES.find((name) => env[name]);
  const profile = args.profile ?? env.AWS_PROFILE ?? 'default';
  const deployRegion = variable ? env[variable] : await profileRegion(args.profile);
  if (args.region) return { region: args.region, source: '--region', deployRegion };
  return { region: deployRegion, source: variable ?? `profile ${profile}` };
};

/** The SDK clients for the region, with short timeouts: a preflight answers in seconds or says why not. */
export const awsClients = ({ region, profile }: ClientConfig): Clients => {
  const config = {
    region,
    ...(profile ? { profile } : {}),
    maxAttempts: 2,
    requestHandler: new NodeHttpHandler({ connectionTimeout: 3000, requestTimeout: 10_000 }),
  };
  return {
    sts: new STSClient(config),
    ssm: new SSMClient(config),
    cfn: new CloudFormationClient(config),
    lambda: new LambdaClient(config),
    ses: new SESv2Client(config),
  };
};

/** The SDK's own lookup: AWS_REGION, then the profile's `region` in ~/.aws/config. */
export const sdkProfileRegion = async (profile: string | undefined): Promise<string | undefined> => {
  try {
    return await new STSClient(profile ? { profile } : {}).config.region();
  } catch (error) {
    if (error instanceof Error && error.message === 'Region is missing') return undefined;
    throw error;
  }
};

export const defaultDeps = (): Deps => ({
  clients: awsClients,
  profileRegion: sdkProfileRegion,
  cdkJson: () => readCdkJson(),
  synthesize,
  print: (line) => console.log(line),
  env: process.env,
});

/** The deploy options as the stacks read them: a bad value is the same one sentence synth fails with. */
const optionsOf = (context: Context): DeployOptions => deployOptions(new App({ context, autoSynth: false }).node);

export const main = async (argv: readonly string[], deps: Deps): Promise<number> => {
  let failed = false;
  const report = (...findings: Finding[]) => {
    for (const f of findings) {
      deps.print(formatFinding(f));
      failed ||= f.level === 'fail';
    }
  };
  let args: Args;
  try {
    args = parseArguments(argv);
  } catch (error) {
    // Node's parseArgs explains at length; its first sentence says what was wrong.
    report(finding('fail', 'usage', (error instanceof Error ? error.message : String(error)).split('. ')[0] ?? '', USAGE));
    return 1;
  }
  if (args.help) {
    deps.print(`usage: ${USAGE}`);
    return 0;
  }
  try {
    const regionSource = await resolveRegion(args, deps.env, deps.profileRegion);
    const clients = deps.clients({ region: regionSource.region, profile: args.profile });
    const noCredentials = await checkCredentials(clients.sts, args.profile ?? deps.env.AWS_PROFILE);
    if (noCredentials) {
      report(noCredentials);
      return 1;
    }
    report(checkRegion(regionSource));
    const region = regionSource.region;
    if (region === undefined) return 1;
    const account = await checkAccount(clients.sts, region);
    report(account.finding);
    if (account.account === undefined) return 1;
    const target: Target = { account: account.account, region };

    const cdk = await deps.cdkJson();
    let options: DeployOptions;
    try {
      options = optionsOf({ ...cdk.context, ...args.context });
    } catch (error) {
      report(finding('fail', 'options', error instanceof Error ? error.message : String(error), 'README, Deploy: the options'));
      return 1;
    }
    let assembly: Assembly;
    try {
      assembly = await deps.synthesize(cdk, args.context, target);
    } catch (error) {
      report(
        finding(
          'fail',
          'synth',
          `the app does not synthesize: ${error instanceof Error ? error.message : String(error)}`,
          'npm run synth shows the whole error',
        ),
      );
      return 1;
    }

    const [bootstrap, others] = await Promise.all([
      checkBootstrap(clients.ssm, clients.cfn, assembly, cdk.toolkitStackName, target),
      readDeployedStacks(
        clients.cfn,
        assembly.stacks.map((stack) => stack.name),
      ).then(async (deployed) => {
        const [concurrency, mail] = await Promise.all([
          checkConcurrency(clients.lambda, assembly, deployed, target),
          checkMail(clients.ses, options.mail, deployed, target),
        ]);
        return [...checkStacks(deployed, assembly, target), ...concurrency, ...mail];
      }),
    ]);
    report(bootstrap, ...others, checkAlarms(options.alarmEmail));
    return failed ? 1 : 0;
  } catch (error) {
    // The checks turn their calls' errors into findings; this is for preflight's own bugs.
    report(finding('fail', 'preflight', `stopped: ${describeError(error)}`));
    return 1;
  }
};
