/**
 * The checks of `npm run preflight` (scripts/preflight.ts): each takes the SDK clients it calls and
 * what the deploy would do, and returns findings. A call the credentials may not make, or that fails
 * otherwise, becomes a `warn` naming the permission: one unanswerable question never hides the others.
 */
import { type CloudFormationClient, DescribeStacksCommand, GetTemplateCommand, type Stack } from '@aws-sdk/client-cloudformation';
import { type AccountLimit, GetAccountSettingsCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import {
  GetAccountCommand,
  type GetAccountCommandOutput,
  GetEmailIdentityCommand,
  type GetEmailIdentityCommandOutput,
  type SESv2Client,
} from '@aws-sdk/client-sesv2';
import { GetParameterCommand, type SSMClient } from '@aws-sdk/client-ssm';
import { GetCallerIdentityCommand, type STSClient } from '@aws-sdk/client-sts';
import { DKIM_OUTPUTS } from '#infra/mail-identity.ts';
import type { MailOptions } from '#infra/options.ts';
import { UNRESERVED_MINIMUM } from '#infra/options.ts';
import { type Assembly, createdIdentities, reservedConcurrency, type Template } from './assembly.ts';
import {
  describeError,
  type Finding,
  finding,
  isMissingStack,
  isNoCredentials,
  isUnreachable,
  notChecked,
  type Target,
} from './findings.ts';

/** Service Quotas' code for Lambda's "Concurrent executions" per account and region. */
export const CONCURRENCY_QUOTA_CODE = 'L-B99A9384';
/** Lambda's default concurrency quota; new accounts start lower and are raised with use or on request. */
export const DEFAULT_CONCURRENCY_QUOTA = 1000;
export const SANDBOX_DOC = 'docs/operations.md#leave-the-ses-sandbox';

const NO_CREDENTIALS_FIX =
  'configure credentials for the target account: `aws configure`, `aws sso login --profile <p>` with AWS_PROFILE=<p>, or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY';

/**
 * The credentials the SDK's default chain finds (environment, profile, SSO, container, instance),
 * resolved before any call so that their absence is one clear line, whatever else is missing.
 */
export const checkCredentials = async (sts: STSClient, profile: string | undefined): Promise<Finding | undefined> => {
  try {
    await sts.config.credentials();
    return undefined;
  } catch (error) {
    const where = profile
      ? `for profile ${profile} (shared config and credentials files, SSO)`
      : '(environment, shared config and credentials files, SSO, container or instance role)';
    if (isNoCredentials(error)) return finding('fail', 'credentials', `no AWS credentials found ${where}`, NO_CREDENTIALS_FIX);
    return finding('fail', 'credentials', `the AWS credentials could not be loaded: ${describeError(error)}`, NO_CREDENTIALS_FIX);
  }
};

/** Where the region came from, in the CDK CLI's order: it deploys an environment-agnostic stack there. */
export interface RegionSource {
  region: string | undefined;
  /** `--region`, an environment variable's name, or `profile <name>`. */
  source: string;
  /** The region `cdk deploy` would take from the environment, when --region names another. */
  deployRegion?: string | undefined;
}

export const checkRegion = ({ region, source, deployRegion }: RegionSource): Finding => {
  if (region === undefined) {
    return finding(
      'fail',
      'region',
      'no region set: cdk deploy would fall back to us-east-1',
      'set AWS_REGION=<region> (or region in the profile), or pass --region <region> to preflight and AWS_REGION=<region> to cdk deploy',
    );
  }
  if (source === '--region') {
    if (deployRegion !== undefined && deployRegion !== region) {
      return finding(
        'warn',
        'region',
        `checking ${region} (--region), but cdk deploy would deploy to ${deployRegion} (from the environment or profile)`,
        `AWS_REGION=${region} npx cdk deploy`,
      );
    }
    return finding('ok', 'region', `${region} (--region); cdk deploy has no --region: deploy with AWS_REGION=${region} npx cdk deploy`);
  }
  return finding('ok', 'region', `${region} (${source})`);
};

/** STS GetCallerIdentity: the credentials work and whose they are. Needs no IAM permission. */
export const checkAccount = async (sts: STSClient, region: string): Promise<{ finding: Finding; account?: string }> => {
  try {
    const identity = await sts.send(new GetCallerIdentityCommand({}));
    return { finding: finding('ok', 'account', `${identity.Account} as ${identity.Arn}`), account: identity.Account };
  } catch (error) {
    const name = error instanceof Error ? error.name : '';
    if (isNoCredentials(error)) return { finding: finding('fail', 'account', 'no AWS credentials found', NO_CREDENTIALS_FIX) };
    if (name === 'ExpiredToken' || name === 'ExpiredTokenException') {
      return {
        finding: finding(
          'fail',
          'account',
          'the AWS credentials have expired',
          'refresh them: `aws sso login`, or new keys or session token',
        ),
      };
    }
    if (name === 'InvalidClientTokenId' || name === 'SignatureDoesNotMatch') {
      return {
        finding: finding(
          'fail',
          'account',
          `STS in ${region} rejects the credentials (${name}): a wrong or deleted key, or ${region} is an opt-in region not enabled for the account`,
          'check the key, or enable the region in the account settings',
        ),
      };
    }
    if (isUnreachable(error))
      return {
        finding: finding(
          'fail',
          'account',
          `cannot reach STS in ${region} (${describeError(error)}): no network, or no region ${region}`,
          'check the connection and the region name (AWS_REGION, --region)',
        ),
      };
    return { finding: finding('fail', 'account', `STS GetCallerIdentity failed: ${describeError(error)}`) };
  }
};

const bootstrapFix = ({ account, region }: Target) => `npx cdk bootstrap aws://${account}/${region}`;

/** The toolkit stack, or undefined when there is none; errors other than "does not exist" throw. */
const describeStack = async (cfn: CloudFormationClient, name: string): Promise<Stack | undefined> => {
  try {
    return (await cfn.send(new DescribeStacksCommand({ StackName: name }))).Stacks?.[0];
  } catch (error) {
    if (isMissingStack(error)) return undefined;
    throw error;
  }
};

const isBusy = (status: string) => status.endsWith('_IN_PROGRESS') && status !== 'REVIEW_IN_PROGRESS';
const isBroken = (status: string) => status.endsWith('_FAILED') || status === 'ROLLBACK_COMPLETE';

/**
 * CDK bootstrap: the version in the SSM parameter the templates' `BootstrapVersion` parameter reads
 * (what CloudFormation checks on deploy) is at least what the app's synth requires, and the toolkit
 * stack is not broken or busy. Its `BootstrapVersion` output stands in when SSM may not be read.
 */
export const checkBootstrap = async (
  ssm: SSMClient,
  cfn: CloudFormationClient,
  assembly: Assembly,
  toolkitStackName: string,
  target: Target,
): Promise<Finding> => {
  const required = assembly.requiredBootstrapVersion;
  const parameter = assembly.bootstrapParameter;
  const [fromParameter, toolkit] = await Promise.allSettled([
    ssm.send(new GetParameterCommand({ Name: parameter })).then(
      (out) => out.Parameter?.Value,
      (error: unknown) => {
        if (error instanceof Error && error.name === 'ParameterNotFound') return undefined;
        throw error;
      },
    ),
    describeStack(cfn, toolkitStackName),
  ]);
  const stack = toolkit.status === 'fulfilled' ? toolkit.value : undefined;
  const status = stack?.StackStatus ?? '';
  if (stack && isBusy(status))
    return finding('fail', 'bootstrap', `${toolkitStackName} is ${status}`, 'wait for it to finish, then run preflight again');
  if (stack && isBroken(status))
    return finding(
      'fail',
      'bootstrap',
      `${toolkitStackName} is ${status}`,
      `${bootstrapFix(target)} (or, if that fails, delete ${toolkitStackName} and its staging bucket, then bootstrap again)`,
    );

  let raw: string | undefined;
  if (fromParameter.status === 'fulfilled') {
    raw = fromParameter.value;
    if (raw === undefined) {
      return stack
        ? finding(
            'fail',
            'bootstrap',
            `${toolkitStackName} exists but ${parameter} does not: it was bootstrapped with another qualifier`,
            bootstrapFix(target),
          )
        : finding(
            'fail',
            'bootstrap',
            `${target.region} is not bootstrapped for the CDK (no SSM parameter ${parameter})`,
            bootstrapFix(target),
          );
    }
  } else {
    raw = stack?.Outputs?.find((o) => o.OutputKey === 'BootstrapVersion')?.OutputValue;
    if (raw === undefined && toolkit.status === 'fulfilled' && !stack) {
      return finding(
        'fail',
        'bootstrap',
        `${target.region} is not bootstrapped for the CDK (no ${toolkitStackName} stack)`,
        bootstrapFix(target),
      );
    }
    if (raw === undefined) return notChecked('bootstrap', `ssm:GetParameter on ${parameter}`, fromParameter.reason);
  }
  const version = Number(raw);
  if (!Number.isInteger(version))
    return finding('fail', 'bootstrap', `${parameter} holds ${JSON.stringify(raw)}, not a version`, bootstrapFix(target));
  if (version < required) {
    return finding(
      'fail',
      'bootstrap',
      `bootstrap version ${version} in ${target.region}, but this app needs ${required} or later: CloudFormation rejects the templates`,
      `${bootstrapFix(target)} (upgrades it in place)`,
    );
  }
  return finding('ok', 'bootstrap', `version ${version} in ${target.region} (this app needs ${required} or later)`);
};

/** A stack of the app as it stands in the account now. */
export type Deployed =
  | { name: string; state: 'absent' }
  | { name: string; state: 'present'; status: string; reason: string | undefined; template: Template | undefined; templateError?: unknown }
  | { name: string; state: 'unknown'; error: unknown };

const parseTemplate = (body: string | undefined): Template | undefined => {
  try {
    return body === undefined ? undefined : (JSON.parse(body) as Template);
  } catch {
    // CDK deploys JSON; a YAML template was put there by hand, and its resources are not compared.
    return undefined;
  }
};

/** DescribeStacks for each stack of the app, and GetTemplate for those that exist (what they reserve and retain). */
export const readDeployedStacks = async (cfn: CloudFormationClient, names: readonly string[]): Promise<Deployed[]> =>
  Promise.all(
    names.map(async (name): Promise<Deployed> => {
      let stack: Stack | undefined;
      try {
        stack = await describeStack(cfn, name);
      } catch (error) {
        return { name, state: 'unknown', error };
      }
      if (!stack) return { name, state: 'absent' };
      const status = stack.StackStatus ?? 'UNKNOWN';
      try {
        const { TemplateBody } = await cfn.send(new GetTemplateCommand({ StackName: name }));
        return { name, state: 'present', status, reason: stack.StackStatusReason, template: parseTemplate(TemplateBody) };
      } catch (templateError) {
        return { name, state: 'present', status, reason: stack.StackStatusReason, template: undefined, templateError };
      }
    }),
  );

/** Deletion policies under which a resource removed from its stack lives on (with its data) outside it. */
const RETAINING = new Set(['Retain', 'RetainExceptOnCreate']);

/**
 * Each stack of the app can take the deploy: absent (created), complete (updated), or a failed
 * first create (`cdk deploy` deletes it first). Busy or failed stacks stop a deploy; so does a
 * retained resource (the table) that this deploy would remove from its stack, which CloudFormation
 * keeps but the app would stop using.
 */
export const checkStacks = (deployed: readonly Deployed[], assembly: Assembly, target: Target): Finding[] =>
  deployed.flatMap((stack): Finding[] => {
    const check = `stack ${stack.name}`;
    const cli = (command: string) => `aws cloudformation ${command} --stack-name ${stack.name} --region ${target.region}`;
    if (stack.state === 'unknown') return [notChecked(check, 'cloudformation:DescribeStacks', stack.error)];
    if (stack.state === 'absent') return [finding('ok', check, 'not deployed yet: cdk deploy creates it')];
    const { status } = stack;
    const why = stack.reason ? ` (${stack.reason})` : '';
    if (isBusy(status))
      return [finding('fail', check, `is ${status}: a deploy now fails`, `wait for it to finish: ${cli('describe-stacks')}`)];
    if (status === 'ROLLBACK_COMPLETE') {
      return [
        finding(
          'warn',
          check,
          'its first create failed and rolled back (ROLLBACK_COMPLETE): cdk deploy deletes it and creates it again; the resources it retained stay behind, unused',
          `see why it failed: ${cli('describe-stack-events')}`,
        ),
      ];
    }
    if (status === 'UPDATE_ROLLBACK_FAILED')
      return [finding('fail', check, `is UPDATE_ROLLBACK_FAILED${why}: it takes no update`, cli('continue-update-rollback'))];
    if (status.endsWith('_FAILED'))
      return [
        finding(
          'fail',
          check,
          `is ${status}${why}`,
          `see the events (${cli('describe-stack-events')}) and delete it: ${cli('delete-stack')}`,
        ),
      ];

    const next = assembly.stacks.find((s) => s.name === stack.name)?.template.Resources ?? {};
    if (!stack.template) {
      return [
        finding('ok', check, `${status}: cdk deploy updates it`),
        ...(stack.templateError === undefined ? [] : [notChecked(check, 'cloudformation:GetTemplate', stack.templateError)]),
      ];
    }
    const dropped = Object.entries(stack.template.Resources ?? {}).filter(
      ([id, resource]) => RETAINING.has(resource.DeletionPolicy ?? '') && !(id in next),
    );
    if (dropped.length === 0) return [finding('ok', check, `${status}: cdk deploy updates it`)];
    return dropped.map(([id, resource]) =>
      finding(
        'fail',
        check,
        `this deploy removes ${id} (${resource.Type}, DeletionPolicy ${resource.DeletionPolicy}) from the stack: CloudFormation keeps it, and the app stops using it and its data`,
        'move it into its new stack first (docs/operations.md, upgrade); do not deploy until then',
      ),
    );
  });

/**
 * Lambda concurrency. Reservations must leave the account UNRESERVED_MINIMUM unreserved, or the
 * deploy fails and rolls back; the reservations the deployed stacks hold now come back to the pool
 * when the same functions are updated, so they count as free. A quota below the minimum is a new
 * account's: everything shares a handful of instances.
 */
export const checkConcurrency = async (
  lambda: LambdaClient,
  assembly: Assembly,
  deployed: readonly Deployed[],
  target: Target,
): Promise<Finding[]> => {
  let limit: AccountLimit | undefined;
  try {
    limit = (await lambda.send(new GetAccountSettingsCommand({}))).AccountLimit;
  } catch (error) {
    return [notChecked('concurrency', 'lambda:GetAccountSettings', error)];
  }
  const quota = limit?.ConcurrentExecutions ?? 0;
  const unreserved = limit?.UnreservedConcurrentExecutions ?? quota;
  const wanted = assembly.stacks.reduce((sum, stack) => sum + reservedConcurrency(stack.template), 0);
  const held = deployed.reduce(
    (sum, stack) => sum + (stack.state === 'present' && stack.template ? reservedConcurrency(stack.template) : 0),
    0,
  );
  const unknownHeld = deployed.some((stack) => stack.state === 'present' && !stack.template);
  const left = unreserved + held - wanted;
  const raise = (needed: number) =>
    `aws service-quotas request-service-quota-increase --service-code lambda --quota-code ${CONCURRENCY_QUOTA_CODE} --desired-value ${Math.max(needed, DEFAULT_CONCURRENCY_QUOTA)} --region ${target.region}`;

  const findings: Finding[] = [];
  if (wanted === 0) {
    findings.push(finding('ok', 'concurrency', `the stacks reserve none; account quota ${quota}, ${unreserved} unreserved`));
  } else if (left >= UNRESERVED_MINIMUM) {
    findings.push(
      finding(
        'ok',
        'concurrency',
        `the stacks reserve ${wanted} of the account's ${quota}, leaving ${left} unreserved (Lambda keeps at least ${UNRESERVED_MINIMUM})`,
      ),
    );
  } else {
    const unsure = unknownHeld ? ' (counting nothing for the deployed stack, whose template could not be read)' : '';
    findings.push(
      finding(
        'fail',
        'concurrency',
        `the stacks reserve ${wanted} and Lambda keeps ${UNRESERVED_MINIMUM} unreserved, but the account has only ${unreserved + held} to give (quota ${quota}): the deploy fails and rolls back${unsure}`,
        `deploy without -c reservedConcurrency=true, or raise the quota: ${raise(quota + UNRESERVED_MINIMUM - left)}`,
      ),
    );
  }
  if (quota < UNRESERVED_MINIMUM) {
    findings.push(
      finding(
        'warn',
        'quota',
        `Lambda concurrency quota ${quota} in ${target.region} (a new account's): every function of the account shares ${quota} instances at once, and requests beyond them are throttled`,
        raise(DEFAULT_CONCURRENCY_QUOTA),
      ),
    );
  }
  return findings;
};

const sendsFor = (account: GetAccountCommandOutput) => {
  const quota = account.SendQuota;
  return quota?.Max24HourSend !== undefined ? `${quota.Max24HourSend} messages a day, ${quota.MaxSendRate} a second` : 'quota unknown';
};

/** SES account state in the region: reachable, sending enabled, not shut down, out of the sandbox. */
const checkSesAccount = async (ses: SESv2Client, target: Target, sending: boolean): Promise<Finding[]> => {
  let account: GetAccountCommandOutput;
  try {
    account = await ses.send(new GetAccountCommand({}));
  } catch (error) {
    if (isUnreachable(error))
      return [
        finding(
          sending ? 'fail' : 'warn',
          'ses',
          `cannot reach SES in ${target.region} (${describeError(error)}): it may not be offered there`,
          'deploy to a region with SES (see the AWS Regional Services list)',
        ),
      ];
    return [notChecked('ses', 'ses:GetAccount', error)];
  }
  if (!sending) return [];
  const findings: Finding[] = [];
  if (account.EnforcementStatus === 'SHUTDOWN')
    findings.push(
      finding(
        'fail',
        'ses',
        `AWS has shut down sending for the account in ${target.region} (enforcement status SHUTDOWN)`,
        "open a case with AWS Support from the SES console's reputation page",
      ),
    );
  else if (account.EnforcementStatus === 'PROBATION')
    findings.push(
      finding(
        'warn',
        'ses',
        `the account is on probation in ${target.region} (bounce or complaint rate too high)`,
        "see the SES console's reputation page",
      ),
    );
  if (account.SendingEnabled === false) {
    findings.push(
      finding(
        'fail',
        'ses',
        `sending is paused for the account in ${target.region}: every e-mail fails`,
        `aws sesv2 put-account-sending-attributes --sending-enabled --region ${target.region}`,
      ),
    );
  }
  if (account.ProductionAccessEnabled === false) {
    const review = account.Details?.ReviewDetails;
    const pending = review?.Status === 'PENDING' ? `; production access requested (case ${review.CaseId ?? 'unknown'}), under review` : '';
    findings.push(
      finding(
        'warn',
        'ses',
        `${target.region} is in the SES sandbox: mail reaches only verified addresses, ${sendsFor(account)}${pending}`,
        `request production access: ${SANDBOX_DOC}`,
      ),
    );
  } else if (findings.length === 0) {
    findings.push(finding('ok', 'ses', `production access in ${target.region}, ${sendsFor(account)}`));
  }
  return findings;
};

/** The identity the mailer sends through: verified (domains: by their DKIM records), or made by this deploy. */
const checkIdentity = async (
  ses: SESv2Client,
  mail: Extract<MailOptions, { transport: 'ses' }>,
  deployed: readonly Deployed[],
  target: Target,
): Promise<Finding> => {
  const { identity, createIdentity } = mail;
  const check = 'ses identity';
  const records = createIdentity
    ? `publish the 3 DKIM CNAME records of the stack outputs ${DKIM_OUTPUTS.join(', ')} in ${identity}'s DNS`
    : `publish ${identity}'s 3 DKIM CNAME records (aws sesv2 get-email-identity --email-identity ${identity} --region ${target.region} lists their tokens)`;
  let found: GetEmailIdentityCommandOutput;
  try {
    found = await ses.send(new GetEmailIdentityCommand({ EmailIdentity: identity }));
  } catch (error) {
    if (error instanceof Error && error.name === 'NotFoundException') {
      return createIdentity
        ? finding(
            'warn',
            check,
            `${identity} is not in SES yet: the deploy creates it, and mail fails until SES sees its DKIM records`,
            `after cdk deploy, ${records}`,
          )
        : finding(
            'fail',
            check,
            `${identity} is not an SES identity in ${target.region}: SES refuses its mail`,
            identity.includes('@')
              ? `aws sesv2 create-email-identity --email-identity ${identity} --region ${target.region}, then open the link SES mails to it`
              : `-c sesDomain=${identity} (the stack creates it), or create and verify it in SES`,
          );
    }
    return notChecked(check, 'ses:GetEmailIdentity', error);
  }
  const ours = deployed.some(
    (stack) => stack.state === 'present' && stack.template && createdIdentities(stack.template).includes(identity),
  );
  if (createIdentity && !ours) {
    return finding(
      'fail',
      check,
      `${identity} already exists in SES in ${target.region}, outside the stacks: creating it fails the deploy`,
      `-c sesIdentity=${identity} instead of -c sesDomain=${identity} (use the existing identity)`,
    );
  }
  const dkim = found.DkimAttributes;
  const isDomain = found.IdentityType !== 'EMAIL_ADDRESS';
  if (!found.VerifiedForSendingStatus) {
    const state = `verification ${found.VerificationStatus ?? 'unknown'}${isDomain ? `, DKIM ${dkim?.Status ?? 'unknown'}` : ''}`;
    return finding(
      createIdentity ? 'warn' : 'fail',
      check,
      `${identity} is not verified for sending (${state}): SES refuses its mail`,
      isDomain ? records : `open the verification link SES mailed to ${identity}`,
    );
  }
  if (isDomain && (dkim?.Status !== 'SUCCESS' || dkim.SigningEnabled === false)) {
    return finding(
      'warn',
      check,
      `${identity} is verified, but DKIM is ${dkim?.SigningEnabled === false ? 'not signing' : (dkim?.Status ?? 'not set up')}: unsigned mail lands in spam more often`,
      records,
    );
  }
  return finding('ok', check, `${identity} is verified for sending${isDomain ? ', DKIM signing' : ''}`);
};

/**
 * Mail: without settings the stack deploys with the log transport (nothing sent); with them, the
 * SES account state in the region and the identity. GetAccount is called either way: it is also the
 * check that SES is offered in the region.
 */
export const checkMail = async (ses: SESv2Client, mail: MailOptions, deployed: readonly Deployed[], target: Target): Promise<Finding[]> => {
  if (mail.transport === 'log') {
    return [
      finding(
        'warn',
        'mail',
        'no mail settings: the stack deploys with the log transport, so invitations are logged, not e-mailed',
        '-c sesDomain=<your domain> (the stack creates the identity), or -c sesIdentity=<verified identity> [-c mailFrom=...]: README, Deploy',
      ),
      ...(await checkSesAccount(ses, target, false)),
    ];
  }
  const [account, identity] = await Promise.all([checkSesAccount(ses, target, true), checkIdentity(ses, mail, deployed, target)]);
  return [...account, identity];
};

/** Alarms reach someone only through a subscription to their topic. */
export const checkAlarms = (alarmEmail: string | undefined): Finding =>
  alarmEmail
    ? finding('ok', 'alarms', `alarms are e-mailed to ${alarmEmail} once the subscription AWS mails after the deploy is confirmed`)
    : finding(
        'warn',
        'alarms',
        "no -c alarmEmail: the alarms' topic has no subscriber, so no alarm reaches anyone",
        '-c alarmEmail=ops@example.com, or subscribe to the topic yourself',
      );
