import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { type CfnStage, HttpApi, HttpMethod, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { Alarm, ComparisonOperator, type IMetric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import {
  type Attribute,
  AttributeType,
  BillingMode,
  Operation,
  ProjectionType,
  StreamViewType,
  Table,
  TableEncryption,
} from 'aws-cdk-lib/aws-dynamodb';
import { type CfnFunction, FilterCriteria, FilterRule, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { CfnRotationSchedule, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { signingKeysPartitionKey } from '../lib/db/entities/keys.ts';
import { ATTRIBUTE_DEFINITIONS, INDEXES, KEYS, STREAM_VIEW_TYPE, TTL_ATTRIBUTE } from '../lib/db/table.ts';
import { FALLBACK, ROUTES, type RouteName } from '../lib/http/routes.ts';
import { INVITE_SWEEP, TEAM_CLEANUP } from '../lib/background.ts';
import { Endpoint, LOG_RETENTION } from './endpoint.ts';
import { acknowledge } from './nag-acknowledgements.ts';
import { STREAM_FILTERS } from './stream-filters.ts';
import { deployOptions } from './options.ts';

/** Secrets Manager rotates the signing keys this often (docs/keys.md); old keys verify until their tokens expire. */
export const KEY_ROTATION_DAYS = 30;

/** The function the table's stream calls to send outbox e-mails (functions/mailer.ts); not a route. */
export const MAILER = 'mailer';
/** The mailer's DynamoDB grants: it claims and settles outbox messages and reads the invite, team and inviter. */
export const MAILER_ACTIONS = ['GetItem', 'UpdateItem'] as const;
/** How often a failed stream record is retried before it goes to the dead-letter queue. */
export const MAIL_RETRY_ATTEMPTS = 8;

/** How often a failed team-cleanup run is retried before its record goes to the dead-letter queue. */
export const CLEANUP_RETRY_ATTEMPTS = 10;

/** The function Secrets Manager calls to rotate the signing keys (functions/keys-rotate.ts); not a route. */
export const KEY_ROTATION = 'keys-rotate';

/**
 * The routes that check a credential: a password (sign-up, sign-in, a password change, where a
 * flood costs a password hash per request) or a refresh token. They get the stricter throttle.
 */
export const CREDENTIAL_ROUTES: readonly RouteName[] = ['auth-signup', 'auth-signin', 'auth-refresh', 'auth-user-update'];

/** One JSON line per request. No header, query or body variable: those carry tokens and passwords. */
export const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  sourceIp: '$context.identity.sourceIp',
  requestTime: '$context.requestTime',
  routeKey: '$context.routeKey',
  status: '$context.status',
  protocol: '$context.protocol',
  responseLength: '$context.responseLength',
  responseLatency: '$context.responseLatency',
  integrationLatency: '$context.integrationLatency',
  integrationError: '$context.integrationErrorMessage',
} as const;

/** `teams-create` -> `TeamsCreate`: construct ids from handler names. */
const idOf = (name: string): string => name.replace(/(?:^|-)(\w)/g, (_match, letter: string) => letter.toUpperCase());

/** lib/db/table.ts names every key attribute; this gives each its CDK type. */
const attribute = (name: string): Attribute => {
  const definition = ATTRIBUTE_DEFINITIONS.find((d) => d.AttributeName === name);
  if (definition?.AttributeType !== 'S') throw new Error(`no string attribute ${name} in lib/db/table.ts`);
  return { name, type: AttributeType.STRING };
};

/**
 * DynamoDB operations the functions call, for the per-operation metrics. Every write transaction
 * is one TransactWriteItems, whatever its items do; a condition check exists only inside one.
 */
const operations = (): Operation[] => {
  const called = new Set<string>(ROUTES.flatMap((route) => route.actions));
  return [Operation.TRANSACT_WRITE_ITEMS, ...Object.values(Operation).filter((op) => called.has(op))];
};

/**
 * Roster: one function per route of lib/http/routes.ts behind an HTTP API, the fallback on the
 * default route, one DynamoDB table, the token signing keys in Secrets Manager with the function
 * that rotates them, and alarms.
 */
export class RosterStack extends Stack {
  /** Every function by its handler name (the route names and FALLBACK), for tests and tools. */
  readonly endpoints = new Map<string, Endpoint>();
  /** The signing-key rotation function (KEY_ROTATION). */
  readonly keyRotation: Endpoint;
  /** The outbox's mailer (MAILER), fed by the table's stream. */
  readonly mailer: Endpoint;
  /** The deleted teams' cleanup (TEAM_CLEANUP), fed by the table's stream. */
  readonly teamCleanup: Endpoint;
  /** The expired invites' sweeper (INVITE_SWEEP), on a schedule. */
  readonly inviteSweep: Endpoint;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    const options = deployOptions(this.node);

    const table = new Table(this, 'Table', {
      partitionKey: attribute(KEYS.pk),
      sortKey: attribute(KEYS.sk),
      billingMode: BillingMode.PAY_PER_REQUEST,
      encryption: TableEncryption.AWS_MANAGED,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
      timeToLiveAttribute: TTL_ATTRIBUTE,
      // The outbox's delivery: the mailer reads new messages from the stream (same view as local).
      stream: StreamViewType[STREAM_VIEW_TYPE],
    });
    for (const [indexName, index] of Object.entries(INDEXES)) {
      table.addGlobalSecondaryIndex({
        indexName,
        partitionKey: attribute(index.pk),
        sortKey: attribute(index.sk),
        projectionType: ProjectionType.ALL,
      });
    }

    // The private signing keys (a JSON keyset, docs/keys.md). CloudFormation creates it holding an
    // empty keyset (plus a generated filler, which CloudFormation requires with a template); the
    // rotation below runs at once on creation and adds the first key. The template and the
    // environment hold only the ARN.
    const signingKey = new Secret(this, 'SigningKey', {
      description: 'Roster access-token signing keys (Ed25519 JWK keyset), rotated by the KeysRotate function',
      generateSecretString: {
        secretStringTemplate: JSON.stringify({ keys: [] }),
        generateStringKey: 'bootstrap',
        passwordLength: 32,
        excludePunctuation: true,
      },
    });
    this.keyRotation = this.rotateKeys(signingKey, table);

    // Unknown paths and methods reach our fallback, so they get our 404/405 envelope, not the gateway's.
    const fallback = this.endpoint(FALLBACK, {});
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
      const fn = this.endpoint(
        route.name,
        { ...(usesTable ? { TABLE_NAME: table.tableName } : {}), ...(signs ? { SIGNING_KEY_SECRET_ARN: signingKey.secretArn } : {}) },
        options.reservedConcurrency && 'reservedConcurrency' in route ? route.reservedConcurrency : undefined,
        'files' in route ? route.files : [],
      );
      // The documentation routes touch no table at all.
      if (usesTable) fn.allowTable(table, route.actions, route.indexes);
      // Only the functions that sign may read the private keys; the others verify with the public
      // keys in the table item (GetItem, in their route actions).
      if (signs) fn.allowSecretRead(signingKey);
      const added = api.addRoutes({
        path: route.path,
        methods: [HttpMethod[route.method]],
        integration: new HttpLambdaIntegration(`${fn.node.id}Integration`, fn),
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
    this.mailer = this.deliverMail(table, stage.url);
    this.teamCleanup = this.cleanUpTeams(table);
    this.inviteSweep = this.sweepInvites(table);

    this.alarm('Api5xx', 'The API answered 5xx', api.metricServerError({ period: Duration.minutes(5), statistic: 'Sum' }));
    const others = [[KEY_ROTATION, this.keyRotation], [MAILER, this.mailer], [TEAM_CLEANUP.name, this.teamCleanup], [INVITE_SWEEP.name, this.inviteSweep]] as const;
    for (const [name, fn] of [...this.endpoints, ...others]) {
      this.alarm(`${fn.node.id}Errors`, `The ${name} function failed`, fn.metricErrors({ period: Duration.minutes(5) }));
    }
    const ops = { operations: operations(), period: Duration.minutes(5) };
    this.alarm('TableThrottles', 'DynamoDB throttled requests', table.metricThrottledRequestsForOperations(ops));
    this.alarm('TableSystemErrors', 'DynamoDB system errors', table.metricSystemErrorsForOperations(ops));

    new CfnOutput(this, 'ApiUrl', { value: stage.url });
    new CfnOutput(this, 'TableName', { value: table.tableName });
  }

  private endpoint(name: string, environment: Record<string, string>, reservedConcurrency?: number, files: readonly string[] = []): Endpoint {
    const fn = new Endpoint(this, idOf(name), { name, environment, reservedConcurrency, files });
    this.endpoints.set(name, fn);
    return fn;
  }

  /**
   * The rotation function and its schedule. It may rotate this one secret (the four rotation
   * actions) and read and write the public keys item: GetItem and PutItem on that item's
   * partition only (`dynamodb:LeadingKeys`, the value taken from the ElectroDB entity). Only
   * Secrets Manager may invoke it, and only for this secret. Not CDK's RotationSchedule, which
   * would also grant GetRandomPassword on `*` and let Secrets Manager invoke it for any secret.
   */
  private rotateKeys(secret: Secret, table: Table): Endpoint {
    const fn = new Endpoint(this, idOf(KEY_ROTATION), { name: KEY_ROTATION, environment: { TABLE_NAME: table.tableName } });
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
    return fn;
  }

  /**
   * The mailer (functions/mailer.ts) on the table's stream, only for new outbox messages (a filter,
   * so it is not invoked for other writes). Failed records are retried with backoff, halving the
   * batch to isolate a bad one; after the last attempt they go to a dead-letter queue that raises
   * an alarm. It sends through SES, allowed for the configured identity only (CDK context
   * `sesIdentity`, `mailFrom`, `publicUrl`: docs/mail.md).
   */
  private deliverMail(table: Table, apiUrl: string): Endpoint {
    const context = (key: string, fallback: string): string => (this.node.tryGetContext(key) as string | undefined) ?? fallback;
    const identity = context('sesIdentity', 'example.com');
    const fn = new Endpoint(this, idOf(MAILER), {
      name: MAILER,
      environment: {
        TABLE_NAME: table.tableName,
        MAIL_TRANSPORT: 'ses',
        MAIL_FROM: context('mailFrom', `Roster <no-reply@${identity.replace(/^.*@/, '')}>`),
        PUBLIC_URL: context('publicUrl', apiUrl),
      },
    });
    fn.allowTable(table, MAILER_ACTIONS, []);
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['ses:SendEmail'],
        resources: [`arn:${this.partition}:ses:${this.region}:${this.account}:identity/${identity}`],
      }),
    );
    const deadLetters = this.deadLetterQueue('MailDeadLetters');
    fn.addEventSource(
      new DynamoEventSource(table, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: 10,
        bisectBatchOnError: true,
        retryAttempts: MAIL_RETRY_ATTEMPTS,
        maxRecordAge: Duration.hours(6),
        reportBatchItemFailures: true,
        onFailure: new SqsDlq(deadLetters),
        filters: [
          FilterCriteria.filter({
            eventName: FilterRule.isEqual('INSERT'),
            dynamodb: { NewImage: { __edb_e__: { S: FilterRule.isEqual('outboxMessage') } } },
          }),
        ],
      }),
    );
    acknowledge('streamListing', fn.role?.node.tryFindChild('DefaultPolicy') ?? fn);
    this.alarm('MailDeadLetters', 'An e-mail could not be delivered after every retry', deadLetters.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5) }));
    return fn;
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
  private cleanUpTeams(table: Table): Endpoint {
    const fn = new Endpoint(this, idOf(TEAM_CLEANUP.name), { name: TEAM_CLEANUP.name, environment: { TABLE_NAME: table.tableName } });
    // Not an API function: its timeout is its own (the API's is capped by the gateway's 29 s).
    (fn.node.defaultChild as CfnFunction).timeout = TEAM_CLEANUP.timeoutSeconds;
    fn.allowTable(table, TEAM_CLEANUP.actions, TEAM_CLEANUP.indexes);
    const deadLetters = this.deadLetterQueue('TeamCleanupDeadLetters');
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
    acknowledge('streamListing', fn.role?.node.tryFindChild('DefaultPolicy') ?? fn);
    this.alarm(
      'TeamCleanupDeadLetters',
      'A deleted team\'s cleanup failed every retry: its rows remain until it is run again',
      deadLetters.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5) }),
    );
    return fn;
  }

  /**
   * The sweeper of expired invites (functions/invite-sweep.ts, lib/invite-sweep.ts) on a schedule.
   * No reserved concurrency (any reservation fails the deploy on an account whose quota is under
   * 100 + it): runs are bounded by their time budget and a watermark, and two that overlap only
   * repeat conditional writes. A failed run is not retried: the next tick starts where it stopped.
   * Its grants: the watermark item and the invites (GetItem, PutItem, UpdateItem) and gsi3 (Query).
   */
  private sweepInvites(table: Table): Endpoint {
    const fn = new Endpoint(this, idOf(INVITE_SWEEP.name), { name: INVITE_SWEEP.name, environment: { TABLE_NAME: table.tableName } });
    (fn.node.defaultChild as CfnFunction).timeout = INVITE_SWEEP.timeoutSeconds;
    fn.allowTable(table, INVITE_SWEEP.actions, INVITE_SWEEP.indexes);
    new Rule(this, 'InviteSweepSchedule', {
      description: 'Takes expired invites out of the invite lists (docs/data-model.md, "Expired invites")',
      schedule: Schedule.rate(Duration.minutes(INVITE_SWEEP.everyMinutes)),
      targets: [new LambdaFunction(fn, { retryAttempts: 0 })],
    });
    return fn;
  }

  /** Where a stream mapping puts the records that failed every retry, for two weeks. */
  private deadLetterQueue(id: string): Queue {
    const queue = new Queue(this, id, { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true, retentionPeriod: Duration.days(14) });
    acknowledge('deadLetterQueue', queue);
    return queue;
  }

  /** Any datapoint at or above 1 in five minutes; no data is fine (no traffic, no errors). */
  private alarm(id: string, description: string, metric: IMetric): void {
    new Alarm(this, `${id}Alarm`, {
      alarmDescription: description,
      metric,
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }
}
