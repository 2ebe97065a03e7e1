import { Annotations, type App, CfnOutput, Duration, Fn, NestedStack, Stack, type StackProps } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { type CfnStage, HttpApi, HttpMethod, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { LambdaApplication, LambdaDeploymentConfig, LambdaDeploymentGroup } from 'aws-cdk-lib/aws-codedeploy';
import { type ITable, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { ManagedPolicy, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Alias, FilterCriteria, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { CfnRotationSchedule, type ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { ConfigurationSet, EmailSendingEvent, EventDestination } from 'aws-cdk-lib/aws-ses';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { LambdaSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { INVITE_SWEEP, MAIL_EVENTS, OUTBOX_SWEEP, TEAM_CLEANUP, WEBHOOK_DELIVERY, WEBHOOK_FANOUT } from '../lib/background.ts';
import { cursorKeyPartitionKey } from '../lib/db/entities/cursor-key.ts';
import { auditEntry } from '../lib/db/entities/audit.ts';
import { signingKeysPartitionKey } from '../lib/db/entities/keys.ts';
import { team } from '../lib/db/entities/teams.ts';
import { webhookDelivery, webhookEndpoint } from '../lib/db/entities/webhooks.ts';
import { partitionPattern } from '../lib/db/partition-patterns.ts';
import { INDEXES } from '../lib/db/table.ts';
import { type DynamoAction, FALLBACK, FUNCTION_DEFAULTS, ROUTES, type RouteName } from '../lib/http/routes.ts';
import { RosterDataStack } from './data-stack.ts';
import { Endpoint, LOG_RETENTION } from './endpoint.ts';
import { Monitoring, routeGroup, type WatchedFunction } from './monitoring.ts';
import { acknowledge } from './nag-acknowledgements.ts';
import { type DeployOptions, deployOptions } from './options.ts';
import { STREAM_FILTERS } from './stream-filters.ts';

/** Secrets Manager rotates the signing keys this often (docs/keys.md); old keys verify until their tokens expire. */
export const KEY_ROTATION_DAYS = 30;

/** The function the table's stream calls to send outbox e-mails (functions/mailer.ts); not a route. */
export const MAILER = 'mailer';
/** The mailer's DynamoDB grants: it claims and settles outbox messages, reads the invite, team, inviter or account, and stores each link's token (PutItem). */
export const MAILER_ACTIONS = ['GetItem', 'UpdateItem', 'PutItem'] as const;
/** How often a failed stream record is retried before it goes to the dead-letter queue. */
export const MAIL_RETRY_ATTEMPTS = 8;

/** How often a failed team-cleanup run is retried before its record goes to the dead-letter queue. */
export const CLEANUP_RETRY_ATTEMPTS = 10;

/** How often a webhook fan-out batch that failed is retried (halved each time) before its records go to the dead-letter queue. */
export const FANOUT_RETRY_ATTEMPTS = 10;

/**
 * The partitions the webhook functions may touch (IAM StringLike patterns of their keys): a team's
 * endpoints, its audit log and its team item, and an endpoint's delivery log. Not users, sessions,
 * keys or claims: the delivery function is the one that talks to hosts the teams choose.
 */
export const WEBHOOK_PARTITIONS = {
  endpoints: partitionPattern(webhookEndpoint(), { teamId: 1, endpointId: 1 }),
  auditLog: partitionPattern(auditEntry(), { teamId: 1, entryId: 'x' }),
  team: partitionPattern(team(), { teamId: 1 }),
  deliveries: partitionPattern(webhookDelivery(), { teamId: 1, endpointId: 1, deliveryId: 'x' }),
} as const;

/** The function Secrets Manager calls to rotate the signing keys (functions/keys-rotate.ts); not a route. */
export const KEY_ROTATION = 'keys-rotate';

/** The alias the HTTP API calls on every API function; CodeDeploy moves it from version to version. */
export const LIVE_ALIAS = 'live';

/**
 * How CodeDeploy moves an API function's alias to a new version with `-c gradualDeploy=true` (off
 * by default: each deploy waits for every canary): a tenth of the requests for five minutes, then
 * all, back to the old version as soon as one of the function's alarms fires.
 */
export const DEPLOYMENT_CONFIG = LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES;

/** The stacks' ids: the stateful one, and the functions' one. */
export const DATA_STACK_ID = 'RosterData';
export const STACK_ID = 'Roster';

/**
 * The nested stacks of the functions' stack that hold the API functions, by id, each with the route
 * groups it holds (infra/monitoring.ts routeGroup, the dashboard's rows). CloudFormation takes 500
 * resources per stack: each API function is 7 in its nested stack (function, role, log group,
 * version, alias, two alarms; 8 with gradual deploys, its CodeDeploy group) and its route 3 in the
 * parent (route, integration, permission). A route of a group not listed here fails the synth.
 */
export const FUNCTION_STACKS = {
  Auth: ['auth'],
  Teams: ['teams', 'members', 'transfer', 'audit', 'webhooks'],
  Invites: ['invites', 'my-invites'],
  Pages: ['docs', 'page', 'fallback'],
} as const satisfies Record<string, readonly string[]>;

export type FunctionStackId = keyof typeof FUNCTION_STACKS;

/** The nested stack an API function (a route name, or FALLBACK) lives in. */
export const functionStackOf = (name: string): FunctionStackId => {
  const group = routeGroup(name);
  const found = (Object.keys(FUNCTION_STACKS) as FunctionStackId[]).find((id) =>
    (FUNCTION_STACKS[id] as readonly string[]).includes(group),
  );
  if (!found) throw new Error(`${name}: its route group ${group} has no nested stack: add it to FUNCTION_STACKS (infra/stack.ts)`);
  return found;
};

/**
 * The routes that check a credential: a password (sign-up, sign-in, a password change or reset,
 * an account deletion, where a flood costs a password hash per request), a refresh token or a
 * mailed link's token, or that mail one (recovery). They get the stricter throttle.
 */
export const CREDENTIAL_ROUTES: readonly RouteName[] = [
  'auth-signup',
  'auth-signin',
  'auth-refresh',
  'auth-user-update',
  'auth-user-delete',
  'auth-verify',
  'auth-recover',
  'auth-reset',
];

/**
 * One JSON line per request. No header, query, path or body variable: those carry tokens,
 * passwords and invite ids (the route key names the route instead). `integrationRequestId` is the
 * function's request id, so a gateway line joins the function's own log line.
 */
export const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  integrationRequestId: '$context.integration.requestId',
  sourceIp: '$context.identity.sourceIp',
  userAgent: '$context.identity.userAgent',
  requestTime: '$context.requestTime',
  httpMethod: '$context.httpMethod',
  routeKey: '$context.routeKey',
  status: '$context.status',
  protocol: '$context.protocol',
  responseLength: '$context.responseLength',
  responseLatency: '$context.responseLatency',
  integrationLatency: '$context.integrationLatency',
  /** What Lambda answered the gateway (a 429 or 5xx here is Lambda's, not the function's). */
  integrationStatus: '$context.integration.integrationStatus',
  integrationError: '$context.integrationErrorMessage',
  /** The gateway's own refusals (its throttle, a timeout), which never reach a function. */
  gatewayError: '$context.error.message',
  gatewayErrorType: '$context.error.responseType',
} as const;

/** The mail line of the `Mail` output when nothing is sent: what to pass instead. */
export const LOG_TRANSPORT_NOTICE =
  "mail is NOT sent (log transport: each message is one line in the mailer's log): pass -c sesDomain=… or -c sesIdentity=…, and -c mailFrom=… (docs/operations.md)";

/** `teams-create` -> `TeamsCreate`: construct ids from handler names. */
const idOf = (name: string): string => name.replace(/(?:^|-)(\w)/g, (_match, letter: string) => letter.toUpperCase());

/** The app: the data stack, and the functions' stack that uses it (infra/app.ts, the tests, the tools). */
export const rosterStacks = (app: App, props: StackProps = {}): { data: RosterDataStack; api: RosterStack } => {
  // Set before any construct (CDK takes context only on an empty tree), here rather than in
  // cdk.json so that the tests build the same app. A deployment group whose alarms are all
  // removed really loses them (the recommended value since CDK 2.65). Cross-stack references are
  // CloudFormation exports ("strong", CDK's default, said explicitly): the data stack cannot be
  // deleted, nor an export the functions use changed, while the functions' stack uses it.
  app.node.setContext('@aws-cdk/aws-codedeploy:removeAlarmsFromDeploymentGroup', true);
  app.node.setContext('@aws-cdk/core:defaultCrossStackReferences', 'strong');
  const data = new RosterDataStack(app, DATA_STACK_ID, {
    ...props,
    description: 'Roster state: table, signing keys, dead-letter queues, SES identity',
  });
  const api = new RosterStack(app, STACK_ID, { ...props, description: 'Roster: teams, members, roles and invitations API', data });
  return { data, api };
};

export interface RosterStackProps extends StackProps {
  readonly data: RosterDataStack;
}

/** What a function that sends mail (the mailer, the outbox sweeper) gets: its settings, and SES if it sends. */
interface MailSending {
  readonly environment: Record<string, string>;
  readonly allow: (fn: Endpoint) => void;
}

/**
 * Roster's functions: one per route of lib/http/routes.ts behind an HTTP API (each on a `live`
 * alias that CodeDeploy moves gradually), the fallback on the default route, the background
 * functions (mailer, team cleanup, invite and outbox sweepers, SES events, key rotation) and the
 * monitoring. The state they use lives in the data stack (infra/data-stack.ts).
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
  /** Every background function by its name (KEY_ROTATION, MAILER, the lib/background.ts names). */
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
    this.monitoring = new Monitoring(this, 'Monitoring', { alarmEmail: options.alarmEmail });

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
    for (const route of ROUTES) {
      const signs = 'signs' in route && route.signs;
      const usesTable = route.actions.length > 0;
      const alias = this.apiFunction(
        route.name,
        {
          ...(usesTable ? { TABLE_NAME: table.tableName } : {}),
          ...(signs ? { SIGNING_KEY_SECRET_ARN: data.signingKey.secretArn } : {}),
          ...('webhookQueue' in route && route.webhookQueue ? { WEBHOOK_QUEUE_URL: data.webhookQueue.queueUrl } : {}),
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
      // Only the functions that sign may read the private keys; the others verify with the public
      // keys in the table item (GetItem, in their route actions).
      if (signs) fn.allowSecretRead(data.signingKey);
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

    this.rotateKeys(data.signingKey, table);
    const mail = this.mailSending(options, table, data, stage.url);
    this.configurationSet = mail.configurationSet;
    this.deliverMail(table, data.mailDeadLetters, mail.sending);
    this.sweepOutbox(table, mail.sending);
    this.cleanUpTeams(table, data.teamCleanupDeadLetters);
    this.sweepInvites(table);
    this.sendWebhooks(table, data);

    this.monitoring.watchApi(api);
    this.monitoring.watchTable(table, Object.keys(INDEXES));
    this.monitoring.watchQueue(
      'MailDeadLetters',
      data.mailDeadLetters,
      'An outbox message failed every retry of the stream: the outbox sweeper sends it again (docs/operations.md)',
    );
    this.monitoring.watchQueue(
      'TeamCleanupDeadLetters',
      data.teamCleanupDeadLetters,
      "A deleted team's cleanup failed every retry: its rows remain until it is run again (docs/operations.md)",
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
    this.monitoring.watchBacklog('WebhookQueue', data.webhookQueue, 'Webhook deliveries are behind');
    this.monitoring.watchQueue(
      'WebhookFanoutDeadLetters',
      data.webhookFanoutDeadLetters,
      'New audit entries could not be queued for their webhook endpoints: they were not sent (docs/operations.md)',
    );
    this.monitoring.watchMail(this.configurationSet?.configurationSetName);

    new CfnOutput(this, 'ApiUrl', { value: stage.url });
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
    });
    this.endpoints.set(name, fn);
    const alias = new Alias(scope, `${id}Live`, { aliasName: LIVE_ALIAS, version: fn.currentVersion });
    this.aliases.set(name, alias);
    const alarms = this.monitoring.watchFunction(
      { name, fn: alias, timeout: fn.timeout ?? Duration.seconds(FUNCTION_DEFAULTS.timeoutSeconds), kind: 'api' },
      scope,
    );
    if (deployments) {
      if (alarms.length === 0) throw new Error(`no alarm to roll back ${name} on: infra/monitoring.ts watchFunction returned none`);
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
  private backgroundFunction(
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
    });
    this.background.set(name, fn);
    const timeout = fn.timeout ?? Duration.seconds(FUNCTION_DEFAULTS.timeoutSeconds);
    // A run with work left stops `reserveMs` before its timeout: that long is its normal duration.
    const budget = reserveMs === undefined ? {} : { budget: Duration.millis(timeout.toMilliseconds() - reserveMs) };
    this.monitoring.watchFunction({ name, fn, timeout, kind, ...budget });
    return fn;
  }

  /**
   * The rotation function and its schedule. It may rotate this one secret (the four rotation
   * actions) and read and write the public keys item: GetItem and PutItem on that item's
   * partition only (`dynamodb:LeadingKeys`, the value taken from the ElectroDB entity). Only
   * Secrets Manager may invoke it, and only for this secret. Not CDK's RotationSchedule, which
   * would also grant GetRandomPassword on `*` and let Secrets Manager invoke it for any secret.
   * The schedule lives here, beside the function, and names the data stack's secret by ARN: the
   * other way round the two stacks would need each other.
   */
  private rotateKeys(secret: ISecret, table: ITable): void {
    const fn = this.backgroundFunction(KEY_ROTATION, 'rotation', { TABLE_NAME: table.tableName });
    fn.allowTable(table, ['GetItem', 'PutItem'], [], [signingKeysPartitionKey()]);
    fn.allowSecretRotation(secret);
    fn.addPermission('SecretsManagerInvoke', {
      principal: new ServicePrincipal('secretsmanager.amazonaws.com'),
      sourceArn: secret.secretArn,
      sourceAccount: this.account,
    });
    const schedule = new CfnRotationSchedule(this, 'SigningKeyRotation', {
      secretId: secret.secretArn,
      rotationLambdaArn: fn.functionArn,
      rotationRules: { scheduleExpression: `rate(${KEY_ROTATION_DAYS} days)` },
      // The first rotation runs when the schedule is created: it makes the first key.
      rotateImmediatelyOnUpdate: true,
    });
    // Secrets Manager calls the function at once, so its permission and policy must exist first.
    schedule.node.addDependency(fn, fn.role ?? fn);
  }

  /**
   * How mail is sent (`-c sesDomain` / `sesIdentity` / `mailFrom` / `publicUrl`, infra/options.ts).
   * With SES: a configuration set that sends bounces and complaints to an SNS topic, which invokes
   * the mail-events function (functions/mail-events.ts: it suppresses the address); the senders
   * name the set (SES_CONFIGURATION_SET) and may send through the identity and the set only.
   * Without: the log transport, and the `Mail` output says that nothing is sent.
   */
  private mailSending(
    options: DeployOptions,
    table: ITable,
    data: RosterDataStack,
    apiUrl: string,
  ): { sending: MailSending; configurationSet: ConfigurationSet | undefined; summary: string } {
    const { mail } = options;
    // Until Roster serves invite pages, the links go to the API (a separate issue adds the pages).
    const publicUrl = mail.publicUrl ?? apiUrl;
    if (mail.transport === 'log') {
      return {
        sending: { environment: { MAIL_TRANSPORT: 'log', PUBLIC_URL: publicUrl }, allow: () => undefined },
        configurationSet: undefined,
        summary: LOG_TRANSPORT_NOTICE,
      };
    }
    // Not encrypted: SES publishes only to a topic without a key or with a customer managed one, and
    // SNS keeps a notice only until the function has it.
    const topic = new Topic(this, 'MailEventsTopic', { displayName: 'Roster SES bounces and complaints', enforceSSL: true });
    const configurationSet = new ConfigurationSet(this, 'MailConfigurationSet', { reputationMetrics: true, sendingEnabled: true });
    configurationSet.addEventDestination('BouncesAndComplaints', {
      destination: EventDestination.snsTopic(topic),
      events: [EmailSendingEvent.BOUNCE, EmailSendingEvent.COMPLAINT],
    });
    this.receiveMailEvents(topic, table, data.mailEventsDeadLetters);
    const resources = [
      this.formatArn({ service: 'ses', resource: 'identity', resourceName: mail.identity }),
      this.formatArn({ service: 'ses', resource: 'configuration-set', resourceName: configurationSet.configurationSetName }),
    ];
    const sending: MailSending = {
      environment: {
        MAIL_TRANSPORT: 'ses',
        MAIL_FROM: mail.from,
        PUBLIC_URL: publicUrl,
        SES_CONFIGURATION_SET: configurationSet.configurationSetName,
      },
      allow: (fn) => fn.addToRolePolicy(new PolicyStatement({ actions: ['ses:SendEmail'], resources })),
    };
    const summary = Fn.join('', [
      `sent with SES as ${mail.from} through ${mail.identity}`,
      mail.createIdentity ? ' (add the DkimCname outputs of RosterData to its DNS)' : '',
      ', configuration set ',
      configurationSet.configurationSetName,
      ', links to ',
      publicUrl,
      '; a new SES account only mails verified addresses until it leaves the sandbox (docs/operations.md)',
    ]);
    return { sending, configurationSet, summary };
  }

  /**
   * The SES events' function (functions/mail-events.ts), subscribed to the configuration set's
   * topic. SNS invokes it asynchronously: Lambda retries a failed event twice, then puts it in the
   * data stack's dead-letter queue, which raises an alarm.
   */
  private receiveMailEvents(topic: Topic, table: ITable, queue: IQueue): void {
    const fn = this.backgroundFunction(MAIL_EVENTS.name, 'sns', { TABLE_NAME: table.tableName }, MAIL_EVENTS.timeoutSeconds);
    fn.allowTable(table, MAIL_EVENTS.actions, MAIL_EVENTS.indexes);
    fn.configureAsyncInvoke({ retryAttempts: 2, onFailure: new SqsDestination(queue) });
    topic.addSubscription(new LambdaSubscription(fn));
  }

  /**
   * The mailer (functions/mailer.ts) on the table's stream, only for new outbox messages (a filter,
   * so it is not invoked for other writes). Failed records are retried with backoff, halving the
   * batch to isolate a bad one; after the last attempt they go to a dead-letter queue that raises
   * an alarm (the outbox sweeper delivers such messages anyway).
   */
  private deliverMail(table: ITable, deadLetters: IQueue, mail: MailSending): void {
    const fn = this.backgroundFunction(MAILER, 'stream', { TABLE_NAME: table.tableName, ...mail.environment });
    fn.allowTable(table, MAILER_ACTIONS, []);
    mail.allow(fn);
    fn.addEventSource(
      new DynamoEventSource(table, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: 10,
        bisectBatchOnError: true,
        retryAttempts: MAIL_RETRY_ATTEMPTS,
        maxRecordAge: Duration.hours(6),
        reportBatchItemFailures: true,
        onFailure: new SqsDlq(deadLetters),
        filters: [FilterCriteria.filter(STREAM_FILTERS[MAILER])],
      }),
    );
    acknowledge('streamListing', fn.role ?? fn);
    this.monitoring.watchStream(fn, MAILER);
  }

  /**
   * The outbox sweeper (functions/outbox-sweep.ts) on a schedule: it delivers the messages the
   * stream left behind (still PENDING, or SENDING past their lease), so it sends like the mailer
   * (same settings and SES grant, the mailer's actions) and queries gsi3 for them. No retry: the
   * next tick goes on. No reserved concurrency (see sweepInvites).
   */
  private sweepOutbox(table: ITable, mail: MailSending): void {
    const fn = this.backgroundFunction(
      OUTBOX_SWEEP.name,
      'schedule',
      { TABLE_NAME: table.tableName, ...mail.environment },
      OUTBOX_SWEEP.timeoutSeconds,
      OUTBOX_SWEEP.reserveSeconds * 1000,
    );
    const actions = [...new Set<DynamoAction>([...MAILER_ACTIONS, ...OUTBOX_SWEEP.actions])];
    fn.allowTable(table, actions, OUTBOX_SWEEP.indexes);
    mail.allow(fn);
    new Rule(this, 'OutboxSweepSchedule', {
      description: "Delivers outbox messages the table's stream left behind (docs/mail.md)",
      schedule: Schedule.rate(Duration.minutes(OUTBOX_SWEEP.everyMinutes)),
      targets: [new LambdaFunction(fn, { retryAttempts: 0 })],
    });
  }

  /**
   * The cleanup of deleted teams (functions/team-cleanup.ts, lib/team-cleanup.ts) on the table's
   * stream, only for the cleanup jobs' INSERT and MODIFY records (each run that ends with work left
   * updates its job, and that MODIFY starts the next run). One job a batch, so a run has the whole
   * timeout for it; its time budget (RESERVE_MS short of the timeout) ends it cleanly first. A run
   * that fails or times out is retried, halving the batch; after the last attempt the record goes to
   * a dead-letter queue that raises an alarm. Its grants: exactly TEAM_CLEANUP.actions on the table
   * and gsi1 (a Query of the team's ended invites).
   */
  private cleanUpTeams(table: ITable, deadLetters: IQueue): void {
    const fn = this.backgroundFunction(
      TEAM_CLEANUP.name,
      'stream',
      { TABLE_NAME: table.tableName },
      TEAM_CLEANUP.timeoutSeconds,
      TEAM_CLEANUP.reserveSeconds * 1000,
    );
    fn.allowTable(table, TEAM_CLEANUP.actions, TEAM_CLEANUP.indexes);
    fn.addEventSource(
      new DynamoEventSource(table, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: TEAM_CLEANUP.batchSize,
        bisectBatchOnError: true,
        retryAttempts: CLEANUP_RETRY_ATTEMPTS,
        maxRecordAge: Duration.days(1),
        reportBatchItemFailures: true,
        onFailure: new SqsDlq(deadLetters),
        filters: [FilterCriteria.filter(STREAM_FILTERS[TEAM_CLEANUP.name])],
      }),
    );
    acknowledge('streamListing', fn.role ?? fn);
    this.monitoring.watchStream(fn, TEAM_CLEANUP.name);
  }

  /**
   * Webhooks (docs/webhooks.md): the fan-out (functions/webhook-fanout.ts) on the table's stream,
   * only for new audit entries, sends one message per subscribed endpoint to the webhook queue; a
   * batch it fails on is retried, halved, then recorded in a dead-letter queue. The delivery
   * (functions/webhook-delivery.ts) receives the queue's messages, 10 at a time, reports each failed
   * one after setting its visibility to the next retry delay (the event source's grants include
   * ChangeMessageVisibility); the queue moves a message to its dead letters after its last attempt.
   * At most 2 deliveries run at once (the least SQS allows): a burst of events waits in the queue
   * rather than take an account's concurrency (as low as 10) from the API.
   */
  private sendWebhooks(table: ITable, data: RosterDataStack): void {
    const fanOut = this.backgroundFunction(
      WEBHOOK_FANOUT.name,
      'stream',
      { TABLE_NAME: table.tableName, WEBHOOK_QUEUE_URL: data.webhookQueue.queueUrl },
      WEBHOOK_FANOUT.timeoutSeconds,
    );
    fanOut.allowTablePartitions(table, WEBHOOK_FANOUT.actions, [WEBHOOK_PARTITIONS.endpoints]);
    data.webhookQueue.grantSendMessages(fanOut);
    fanOut.addEventSource(
      new DynamoEventSource(table, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: WEBHOOK_FANOUT.batchSize,
        bisectBatchOnError: true,
        retryAttempts: FANOUT_RETRY_ATTEMPTS,
        maxRecordAge: Duration.hours(6),
        reportBatchItemFailures: true,
        onFailure: new SqsDlq(data.webhookFanoutDeadLetters),
        filters: [FilterCriteria.filter(STREAM_FILTERS[WEBHOOK_FANOUT.name])],
      }),
    );
    acknowledge('streamListing', fanOut.role ?? fanOut);
    this.monitoring.watchStream(fanOut, WEBHOOK_FANOUT.name);

    const delivery = this.backgroundFunction(
      WEBHOOK_DELIVERY.name,
      'queue',
      { TABLE_NAME: table.tableName, WEBHOOK_QUEUE_URL: data.webhookQueue.queueUrl },
      WEBHOOK_DELIVERY.timeoutSeconds,
    );
    const { endpoints, auditLog, team: teamItem, deliveries } = WEBHOOK_PARTITIONS;
    delivery.allowTablePartitions(table, ['BatchGetItem'], [endpoints, auditLog, teamItem]);
    delivery.allowTablePartitions(table, ['PutItem'], [deliveries]);
    delivery.addEventSource(
      new SqsEventSource(data.webhookQueue, {
        batchSize: WEBHOOK_DELIVERY.batchSize,
        reportBatchItemFailures: true,
        maxConcurrency: WEBHOOK_DELIVERY.maxConcurrency,
      }),
    );
  }

  /**
   * The sweeper of expired invites (functions/invite-sweep.ts, lib/invite-sweep.ts) on a schedule.
   * No reserved concurrency (any reservation fails the deploy on an account whose quota is under
   * 100 + it): runs are bounded by their time budget and a watermark, and two that overlap only
   * repeat conditional writes. A failed run is not retried: the next tick starts where it stopped.
   * Its grants: the watermark item and the invites (GetItem, PutItem, UpdateItem) and gsi3 (Query).
   */
  private sweepInvites(table: ITable): void {
    const fn = this.backgroundFunction(
      INVITE_SWEEP.name,
      'schedule',
      { TABLE_NAME: table.tableName },
      INVITE_SWEEP.timeoutSeconds,
      INVITE_SWEEP.reserveSeconds * 1000,
    );
    fn.allowTable(table, INVITE_SWEEP.actions, INVITE_SWEEP.indexes);
    new Rule(this, 'InviteSweepSchedule', {
      description: 'Takes expired invites out of the invite lists (docs/data-model.md, "Expired invites")',
      schedule: Schedule.rate(Duration.minutes(INVITE_SWEEP.everyMinutes)),
      targets: [new LambdaFunction(fn, { retryAttempts: 0 })],
    });
  }
}
