import { Annotations, type App, CfnOutput, Duration, NestedStack, Stack, type StackProps } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { type CfnStage, HttpApi, HttpMethod, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { LambdaApplication, LambdaDeploymentGroup } from 'aws-cdk-lib/aws-codedeploy';
import { type ITable, Table } from 'aws-cdk-lib/aws-dynamodb';
import { StringParameter } from 'aws-cdk-lib/aws-ssm';
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Alias } from 'aws-cdk-lib/aws-lambda';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { ConfigurationSet } from 'aws-cdk-lib/aws-ses';
import type { Construct } from 'constructs';
import { cursorKeyPartitionKey } from '#lib/db/entities/cursor-key.ts';
import { INDEXES } from '#lib/db/entities/table.ts';
import { FALLBACK, FUNCTION_DEFAULTS, ROUTES } from '#lib/http/routes.ts';
import {
  ACCESS_LOG_FIELDS,
  CREDENTIAL_ROUTES,
  DEPLOYMENT_CONFIG,
  FUNCTION_STACKS,
  type FunctionStackId,
  LIVE_ALIAS,
  functionStackOf,
  idOf,
} from './api-settings.ts';
import {
  LOG_TRANSPORT_NOTICE,
  cleanUpTeams,
  deliverMail,
  dispatchStream,
  mailSending,
  rotateKeys,
  sweepCleanupJobs,
  recheckDomains,
  sweepInvites,
  sweepOutbox,
} from './background.ts';
import { sendWebhooks, sweepWebhooks } from './webhooks.ts';
import { RosterDataStack, streamArnParameter } from './data-stack.ts';
import { Endpoint, LOG_RETENTION } from './endpoint.ts';
import { type WatchedFunction } from './monitoring/metrics.ts';
import { Monitoring } from './monitoring/monitoring.ts';
import { acknowledge } from './nag-acknowledgements.ts';
import { providerSignIn } from './oauth.ts';
import { type DeployOptions, deployOptions } from './options.ts';

/** The stacks' ids: the stateful one, and the functions' one. */
export const DATA_STACK_ID = 'RosterData';
export const STACK_ID = 'Roster';

/**
 * A stage's name (`-c stage=NAME`): letters, digits and hyphens, starting with a letter, at most
 * 20, so that `RosterData-<stage>` and every name derived from a stack's name stay within AWS's
 * limits. Undefined: the stacks keep their names of before stages (`RosterData`, `Roster`).
 */
export const stageName = (raw: unknown): string | undefined => {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !/^[A-Za-z][A-Za-z0-9-]{0,19}$/.test(raw))
    throw new Error(`context stage must be 1 to 20 letters, digits or hyphens, starting with a letter, not ${JSON.stringify(raw)}`);
  return raw;
};

/**
 * The app: the data stack, and the functions' stack that uses it (infra/app.ts, the tests, the
 * tools), for one stage. Every name in them derives from the stack's name (alarms, the
 * topic, exports) or is CloudFormation's (table, secret, functions, queues, log groups), so stages
 * deploy side by side in one account and region (docs/operations.md, "Stages"); test/infra/stages.test.ts
 * synthesizes two into one app.
 */
export const rosterStacks = (app: App, props: StackProps = {}, stage?: string): { data: RosterDataStack; api: RosterStack } => {
  // Set before any construct (CDK takes context only on an empty tree), here rather than in
  // cdk.json so that the tests build the same app. A deployment group whose alarms are all
  // removed really loses them (the recommended value since CDK 2.65). Cross-stack references are
  // CloudFormation exports ("strong", CDK's default, said explicitly): the data stack cannot be
  // deleted, nor an export the functions use changed, while the functions' stack uses it. A second
  // stage in the same app finds them set.
  if (app.node.children.length === 0) {
    app.node.setContext('@aws-cdk/aws-codedeploy:removeAlarmsFromDeploymentGroup', true);
    app.node.setContext('@aws-cdk/core:defaultCrossStackReferences', 'strong');
  }
  const suffix = stage === undefined ? '' : `-${stage}`;
  const data = new RosterDataStack(app, `${DATA_STACK_ID}${suffix}`, {
    ...props,
    description: `Roster state: table, signing keys, dead-letter queues, SES identity${stage ? ` (${stage})` : ''}`,
  });
  const api = new RosterStack(app, `${STACK_ID}${suffix}`, {
    ...props,
    description: `Roster: teams, members, roles and invitations API${stage ? ` (${stage})` : ''}`,
    data,
  });
  return { data, api };
};

export interface RosterStackProps extends StackProps {
  readonly data: RosterDataStack;
}

/**
 * Roster's functions: one per route of lib/http/routes.ts behind an HTTP API (each on a `live`
 * alias that CodeDeploy moves gradually), the fallback on the default route, the background
 * functions (the stream's reader, mailer, team cleanup, webhooks, the sweepers, SES events, key
 * rotation) and the monitoring. The state they use lives in the data stack (infra/data-stack.ts).
 *
 * The API functions, with their versions, aliases, CodeDeploy groups and alarms, live in nested
 * stacks (FUNCTION_STACKS), so that routes can be added past CloudFormation's 500 resources per
 * stack; this stack keeps the HTTP API with its routes, integrations and invoke permissions, the
 * background functions, the alarm topic, the dashboard and the service alarms. CDK passes what
 * crosses the two as nested stack parameters (this stack's topic, CodeDeploy application and role)
 * and outputs (the aliases' ARNs, the functions' names); the data stack's values are imported
 * where they are used.
 */
export class RosterStack extends Stack {
  /** The API's functions by handler name (the route names and FALLBACK), each in its nested stack. */
  readonly endpoints = new Map<string, Endpoint>();
  /** The `live` alias of each API function, which the HTTP API calls. */
  readonly aliases = new Map<string, Alias>();
  /** The CodeDeploy group of each API function (none with `-c gradualDeploy=false`). */
  readonly deploymentGroups = new Map<string, LambdaDeploymentGroup>();
  /** Every background function by its name (KEY_ROTATION, MAILER, the lib/http/background.ts names). */
  readonly background = new Map<string, Endpoint>();
  /** The nested stacks of the API functions by id (FUNCTION_STACKS), made as a route first needs one. */
  readonly functionStacks = new Map<FunctionStackId, NestedStack>();
  /** The table the functions use: the data stack's, or a restored one (`-c tableName`). */
  readonly table: ITable;
  /** The SES configuration set the mail goes through (SES transport only). */
  readonly configurationSet: ConfigurationSet | undefined;
  readonly monitoring: Monitoring;
  readonly options: DeployOptions;

  constructor(scope: Construct, id: string, { data, ...props }: RosterStackProps) {
    super(scope, id, props);
    const options = deployOptions(this.node);
    this.options = options;
    // After a point-in-time restore the functions move to the restored table (`-c tableName`); the
    // data stack keeps the old one (retained, deletion protection) until a person deletes it.
    const table: ITable = options.table
      ? Table.fromTableAttributes(this, 'RestoredTable', { ...options.table, globalIndexes: Object.keys(INDEXES) })
      : data.table;
    this.table = table;
    this.monitoring = new Monitoring(this, 'Monitoring', {
      alarmEmail: options.alarmEmail,
      rollbackAlarms: options.gradualDeploy,
      functionAlarms: options.functionAlarms,
      dashboard: options.dashboard,
      monthlyBudget: options.monthlyBudget,
    });

    // Unknown paths and methods reach our fallback, so they get our 404/405 envelope, not the gateway's.
    const deployments = this.deployments(options);
    const fallback = this.apiFunction(FALLBACK, {}, deployments);
    const api = new HttpApi(this, 'Api', {
      description: 'Roster JSON API',
      defaultIntegration: new HttpLambdaIntegration('FallbackIntegration', fallback),
      createDefaultStage: false,
    });
    const accessLogs = new LogGroup(this, 'ApiAccessLogs', { retention: LOG_RETENTION });
    const stage = api.addStage('DefaultStage', {
      stageName: '$default',
      autoDeploy: true,
      throttle: options.routes,
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
      },
    });

    // The credential routes' own ceiling, per route key. RouteSettings is untyped JSON in CDK, passed through as is,
    // so it takes CloudFormation's casing.
    const routeSettings: Record<string, { ThrottlingRateLimit: number; ThrottlingBurstLimit: number }> = {};
    // The tokens' issuer: the API's own URL (its $default stage has no path), or -c issuer. Every
    // API function knows it: the signers put it in `iss`, the verifiers check it, the discovery
    // document names it (docs/protect-your-api.md).
    const issuer = options.issuer ?? `https://${api.apiId}.execute-api.${this.region}.${this.urlSuffix}`;
    // The pages' URL, as the mail links name it (a TOTP key's issuer; the passkeys' relying party and origins unless set apart).
    const publicUrlEnvironment: Record<string, string> = {
      PUBLIC_URL: options.mail.publicUrl ?? `https://${api.apiId}.execute-api.${this.region}.${this.urlSuffix}`,
      ...(options.passkeys.rpId ? { PASSKEY_RP_ID: options.passkeys.rpId } : {}),
      ...(options.passkeys.origins ? { PASSKEY_ORIGINS: options.passkeys.origins.join(',') } : {}),
    };
    const oauth = providerSignIn(this, options.oauth);
    for (const route of ROUTES) {
      const signs = 'signs' in route && route.signs;
      // Sealing keys ride in the signing keys' secret (lib/auth/factor-seal.ts): the same read.
      const readsKeys = signs || ('seals' in route && route.seals);
      const usesTable = route.actions.length > 0;
      const alias = this.apiFunction(
        route.name,
        {
          TOKEN_ISSUER: issuer,
          ...(usesTable ? { TABLE_NAME: table.tableName } : {}),
          ...(readsKeys ? { SIGNING_KEY_SECRET_ARN: data.signingKey.secretArn } : {}),
          ...('webhookQueue' in route && route.webhookQueue ? { WEBHOOK_QUEUE_URL: data.webhookQueue.queueUrl } : {}),
          ...('publicUrl' in route && route.publicUrl ? publicUrlEnvironment : {}),
          ...oauth.environment('oauth' in route ? route.oauth : undefined),
        },
        deployments,
        options.reservedConcurrency && 'reservedConcurrency' in route ? route.reservedConcurrency : undefined,
        'files' in route ? route.files : [],
      );
      const fn = this.endpoints.get(route.name) as Endpoint;
      // The documentation routes touch no table at all.
      if (usesTable) fn.allowTable(table, route.actions, route.indexes);
      // A list may create the cursor key item on first need, and write nothing else with PutItem.
      if ('pages' in route && route.pages) fn.allowTable(table, ['PutItem'], [], [cursorKeyPartitionKey()]);
      // Only the functions that sign or seal may read the private keys; the others verify with the
      // public keys in the table item (GetItem, in their route actions).
      if (readsKeys) fn.allowSecretRead(data.signingKey);
      if ('oauth' in route && route.oauth === 'secret') oauth.allowSecretRead(fn);
      if ('webhookQueue' in route && route.webhookQueue) data.webhookQueue.grantSendMessages(fn);
      const added = api.addRoutes({
        path: route.path,
        methods: [HttpMethod[route.method]],
        integration: new HttpLambdaIntegration(`${fn.node.id}Integration`, alias),
      });
      acknowledge(route.auth ? 'tokenRoute' : 'publicRoute', ...added);
      if (CREDENTIAL_ROUTES.includes(route.name)) {
        const { rateLimit, burstLimit } = options.credentials;
        routeSettings[`${route.method} ${route.path}`] = { ThrottlingRateLimit: rateLimit, ThrottlingBurstLimit: burstLimit };
        // A route setting must name an existing route, so the stage waits for it.
        stage.node.addDependency(...added);
      }
    }
    (stage.node.defaultChild as CfnStage).routeSettings = routeSettings;
    acknowledge('publicRoute', api.node.findChild('DefaultRoute'));

    rotateKeys(this, data.signingKey, table);
    const mail = mailSending(this, options, table, data, stage.url);
    this.configurationSet = mail.configurationSet;
    // The stream's ARN as the data stack publishes it (read at deploy, not imported), or the restored table's.
    const streamArn = options.table?.tableStreamArn ?? StringParameter.valueForStringParameter(this, streamArnParameter(data.stackName));
    dispatchStream(this, table, streamArn, data);
    deliverMail(this, table, data, mail.sending);
    sweepOutbox(this, table, mail.sending);
    cleanUpTeams(this, table, data);
    sweepCleanupJobs(this, table);
    sweepInvites(this, table);
    recheckDomains(this, table);
    sendWebhooks(this, table, data);
    sweepWebhooks(this, table, data);

    this.monitoring.watchApi(api);
    this.monitoring.watchTable(table, Object.keys(INDEXES));
    this.monitoring.watchQueue(
      'StreamDeadLetters',
      data.streamDeadLetters,
      'Stream records could not be queued for their work after 10 retries: replay them within 24 hours of the write, while the stream keeps them (docs/operations.md)',
    );
    this.monitoring.watchQueue(
      'MailDeadLetters',
      data.mailDeadLetters,
      'An outbox message failed every receive of its queue: the outbox sweeper sends it anyway (docs/operations.md)',
    );
    this.monitoring.watchQueue(
      'TeamCleanupDeadLetters',
      data.teamCleanupDeadLetters,
      "A deleted team's cleanup failed every receive of its queue: the cleanup sweep starts it again (docs/operations.md)",
    );
    this.monitoring.watchQueue(
      'MailEventsDeadLetters',
      data.mailEventsDeadLetters,
      'An SES bounce or complaint could not be recorded: its address is not suppressed (docs/operations.md)',
    );
    this.monitoring.watchQueue(
      'WebhookDeadLetters',
      data.webhookDeadLetters,
      'A webhook message failed all its attempts over 28 hours: its endpoint did not take it (docs/operations.md)',
    );
    this.monitoring.watchQueue(
      'WebhookFanoutDeadLetters',
      data.webhookFanoutDeadLetters,
      'New audit entries could not be queued for their webhook endpoints after every receive: replay them (docs/operations.md)',
    );
    this.monitoring.watchBacklog('WebhookQueue', data.webhookQueue, 'Webhook deliveries are behind');
    this.monitoring.watchBacklog('MailQueue', data.workQueues.mailer, 'Mail is behind');
    this.monitoring.watchBacklog('CleanupQueue', data.workQueues['team-cleanup'], 'Team cleanups are behind');
    this.monitoring.watchBacklog('FanoutQueue', data.workQueues['webhook-fanout'], 'Webhook fan-out is behind');
    this.monitoring.watchMail(this.configurationSet?.configurationSetName);

    new CfnOutput(this, 'ApiUrl', { value: stage.url });
    new CfnOutput(this, 'TokenIssuer', {
      description: "The access tokens' iss: a JWT authorizer's issuer, whose /.well-known/openid-configuration names the keys",
      value: issuer,
    });
    new CfnOutput(this, 'Mail', { description: 'How the mailer and the outbox sweeper send', value: mail.summary });
    if (options.mail.transport === 'log') Annotations.of(this).addWarningV2('roster:mail-not-sent', LOG_TRANSPORT_NOTICE);
  }

  /**
   * The CodeDeploy application and the one role its deployment groups share (CDK would make a role
   * per group), or undefined with `-c gradualDeploy=false`: then each alias moves to the new version
   * at once, as the stack update sets it.
   */
  private deployments(options: DeployOptions): { application: LambdaApplication; role: Role } | undefined {
    if (!options.gradualDeploy) return undefined;
    const role = new Role(this, 'DeploymentRole', {
      assumedBy: new ServicePrincipal('codedeploy.amazonaws.com'),
      description: "CodeDeploy moving the Roster API functions' live aliases",
      // What LambdaDeploymentGroup attaches anyway (it adds this policy to any role it is given).
      managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSCodeDeployRoleForLambdaLimited')],
    });
    acknowledge('codeDeployRole', role);
    return { application: new LambdaApplication(this, 'Deployments'), role };
  }

  /** The nested stack of this API function, made on first use (a nested stack without resources cannot deploy). */
  private functionStack(name: string): NestedStack {
    const id = functionStackOf(name);
    const existing = this.functionStacks.get(id);
    if (existing) return existing;
    const groups = FUNCTION_STACKS[id].join(', ');
    const created = new NestedStack(this, id, { description: `Roster: the API functions of the route groups ${groups}` });
    this.functionStacks.set(id, created);
    return created;
  }

  /**
   * An API function (a route's, or the fallback), published as a version behind the `live` alias
   * the HTTP API calls, watched by the monitoring; with gradual deploys, CodeDeploy shifts the alias
   * (DEPLOYMENT_CONFIG) and rolls back on the alarms the monitoring returns for it. All of them in
   * the function's nested stack: a CodeDeploy group, the alias it moves (whose update policy names
   * the group) and the alarms it rolls back on must share a stack, or the stacks would need each other.
   */
  private apiFunction(
    name: string,
    environment: Record<string, string>,
    deployments: { application: LambdaApplication; role: Role } | undefined,
    reservedConcurrency?: number,
    files: readonly string[] = [],
  ): Alias {
    const id = idOf(name);
    const scope = this.functionStack(name);
    const fn = new Endpoint(scope, id, {
      name,
      environment,
      reservedConcurrency,
      files,
      tracing: this.options.tracing,
      compileCache: this.options.compileCache,
      sourceMaps: this.options.sourceMaps,
    });
    this.endpoints.set(name, fn);
    const alias = new Alias(scope, `${id}Live`, { aliasName: LIVE_ALIAS, version: fn.currentVersion });
    this.aliases.set(name, alias);
    const alarms = this.monitoring.watchFunction(
      { name, fn: alias, timeout: fn.timeout ?? Duration.seconds(FUNCTION_DEFAULTS.timeoutSeconds), kind: 'api' },
      scope,
    );
    if (deployments) {
      if (alarms.length === 0) throw new Error(`no alarm to roll back ${name} on: infra/monitoring/function-alarms.ts made none`);
      this.deploymentGroups.set(
        name,
        new LambdaDeploymentGroup(scope, `${id}Deployment`, {
          ...deployments,
          alias,
          deploymentConfig: DEPLOYMENT_CONFIG,
          alarms,
          autoRollback: { failedDeployment: true, stoppedDeployment: true, deploymentInAlarm: true },
        }),
      );
    }
    return alias;
  }

  /**
   * A background function: no alias, its updates take effect at once. A canary could not judge
   * them: a scheduled sweep runs once a minute and the rotation once a month, and a stream or SNS
   * function retries its own failures; each of them is idempotent, and their failures end in a
   * dead-letter queue or the next run, never lost. They stay in this stack (a few dozen resources):
   * moved, a stream function's mapping would be replaced, and a new mapping starts at the stream's
   * trim horizon again.
   */
  backgroundFunction(
    name: string,
    kind: WatchedFunction['kind'],
    environment: Record<string, string>,
    timeoutSeconds?: number,
    reserveMs?: number,
  ): Endpoint {
    const fn = new Endpoint(this, idOf(name), {
      name,
      environment,
      timeoutSeconds,
      tracing: this.options.tracing,
      compileCache: this.options.compileCache,
      sourceMaps: this.options.sourceMaps,
    });
    this.background.set(name, fn);
    const timeout = fn.timeout ?? Duration.seconds(FUNCTION_DEFAULTS.timeoutSeconds);
    // A run with work left stops `reserveMs` before its timeout: that long is its normal duration.
    const budget = reserveMs === undefined ? {} : { budget: Duration.millis(timeout.toMilliseconds() - reserveMs) };
    this.monitoring.watchFunction({ name, fn, timeout, kind, ...budget });
    return fn;
  }
}
