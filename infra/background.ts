import type { Stack } from 'aws-cdk-lib';
import { Duration, Fn } from 'aws-cdk-lib';
import { type ITable, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { FilterCriteria, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { CfnRotationSchedule, type ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { ConfigurationSet, EmailSendingEvent, EventDestination } from 'aws-cdk-lib/aws-ses';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { LambdaSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { signingKeysPartitionKey } from '#lib/db/entities/keys.ts';
import { queueUrlVariable } from '#lib/events/queues.ts';
import { STREAM_FILTERS } from '#lib/events/stream-filters.ts';
import {
  CLEANUP_SWEEP,
  DOMAIN_RECHECK,
  INVITE_SWEEP,
  MAILER,
  MAIL_EVENTS,
  OUTBOX_SWEEP,
  STREAM_DISPATCH,
  TEAM_CLEANUP,
  WORK_QUEUES,
  type WorkFunction,
} from '#lib/http/background.ts';
import { type DynamoAction } from '#lib/http/routes.ts';
import type { RosterDataStack } from './data-stack.ts';
import type { Endpoint } from './endpoint.ts';
import { type WatchedFunction } from './monitoring/metrics.ts';
import type { Monitoring } from './monitoring/monitoring.ts';
import { acknowledge } from './nag-acknowledgements.ts';
import { type DeployOptions } from './options.ts';

/**
 * Roster's background functions, each wired to what starts it (the table's stream, a schedule, a
 * queue, SNS, Secrets Manager) with its grants and alarms: the mailer, the outbox and invite
 * sweepers, the team cleanup, SES events and key rotation (webhooks: ./webhooks.ts). The functions'
 * stack (./stack.ts) makes each through `host.backgroundFunction`.
 */

/** Secrets Manager rotates the signing keys this often (docs/keys.md); old keys verify until their tokens expire. */
export const KEY_ROTATION_DAYS = 30;

/** The function Secrets Manager calls to rotate the signing keys (functions/keys-rotate.ts); not a route. */
export const KEY_ROTATION = 'keys-rotate';

/** The mail line of the `Mail` output when nothing is sent: what to pass instead. */
export const LOG_TRANSPORT_NOTICE =
  "mail is NOT sent (log transport: each message is one line in the mailer's log): pass -c sesDomain=… or -c sesIdentity=…, and -c mailFrom=… (docs/operations.md)";

/** What a function that sends mail (the mailer, the outbox sweeper) gets: its settings, and SES if it sends. */
interface MailSending {
  readonly environment: Record<string, string>;
  readonly allow: (fn: Endpoint) => void;
}

/** The stack that holds the background functions: it makes each one (and watches it). */
export type BackgroundHost = Stack & {
  readonly monitoring: Monitoring;
  backgroundFunction(
    name: string,
    kind: WatchedFunction['kind'],
    environment: Record<string, string>,
    timeoutSeconds?: number,
    reserveMs?: number,
  ): Endpoint;
};

/**
 * The rotation function and its schedule. It may rotate this one secret (the four rotation
 * actions) and read and write the public keys item: GetItem and PutItem on that item's
 * partition only (`dynamodb:LeadingKeys`, the value taken from the ElectroDB entity). Only
 * Secrets Manager may invoke it, and only for this secret. Not CDK's RotationSchedule, which
 * would also grant GetRandomPassword on `*` and let Secrets Manager invoke it for any secret.
 * The schedule lives here, beside the function, and names the data stack's secret by ARN: the
 * other way round the two stacks would need each other.
 */
export const rotateKeys = (host: BackgroundHost, secret: ISecret, table: ITable): void => {
  const fn = host.backgroundFunction(KEY_ROTATION, 'rotation', { TABLE_NAME: table.tableName });
  fn.allowTable(table, ['GetItem', 'PutItem'], [], [signingKeysPartitionKey()]);
  fn.allowSecretRotation(secret);
  fn.addPermission('SecretsManagerInvoke', {
    principal: new ServicePrincipal('secretsmanager.amazonaws.com'),
    sourceArn: secret.secretArn,
    sourceAccount: host.account,
  });
  const schedule = new CfnRotationSchedule(host, 'SigningKeyRotation', {
    secretId: secret.secretArn,
    rotationLambdaArn: fn.functionArn,
    rotationRules: { scheduleExpression: `rate(${KEY_ROTATION_DAYS} days)` },
    // The first rotation runs when the schedule is created: it makes the first key.
    rotateImmediatelyOnUpdate: true,
  });
  // Secrets Manager calls the function at once, so its permission and policy must exist first.
  schedule.node.addDependency(fn, fn.role ?? fn);
};

/**
 * How mail is sent (`-c sesDomain` / `sesIdentity` / `mailFrom` / `publicUrl`, infra/options.ts).
 * With SES: a configuration set that sends bounces and complaints to an SNS topic, which invokes
 * the mail-events function (functions/mail-events.ts: it suppresses the address); the senders
 * name the set (SES_CONFIGURATION_SET) and may send through the identity and the set only.
 * Without: the log transport, and the `Mail` output says that nothing is sent.
 */
export const mailSending = (
  host: BackgroundHost,
  options: DeployOptions,
  table: ITable,
  data: RosterDataStack,
  apiUrl: string,
): { sending: MailSending; configurationSet: ConfigurationSet | undefined; summary: string } => {
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
  const topic = new Topic(host, 'MailEventsTopic', { displayName: 'Roster SES bounces and complaints', enforceSSL: true });
  const configurationSet = new ConfigurationSet(host, 'MailConfigurationSet', { reputationMetrics: true, sendingEnabled: true });
  configurationSet.addEventDestination('BouncesAndComplaints', {
    destination: EventDestination.snsTopic(topic),
    events: [EmailSendingEvent.BOUNCE, EmailSendingEvent.COMPLAINT],
  });
  receiveMailEvents(host, topic, table, data.mailEventsDeadLetters);
  const resources = [
    host.formatArn({ service: 'ses', resource: 'identity', resourceName: mail.identity }),
    host.formatArn({ service: 'ses', resource: 'configuration-set', resourceName: configurationSet.configurationSetName }),
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
    mail.createIdentity ? ` (add the DkimCname outputs of ${data.stackName} to its DNS)` : '',
    ', configuration set ',
    configurationSet.configurationSetName,
    ', links to ',
    publicUrl,
    '; a new SES account only mails verified addresses until it leaves the sandbox (docs/operations.md)',
  ]);
  return { sending, configurationSet, summary };
};

/**
 * The SES events' function (functions/mail-events.ts), subscribed to the configuration set's
 * topic. SNS invokes it asynchronously: Lambda retries a failed event twice, then puts it in the
 * data stack's dead-letter queue, which raises an alarm.
 */
const receiveMailEvents = (host: BackgroundHost, topic: Topic, table: ITable, queue: IQueue): void => {
  const fn = host.backgroundFunction(MAIL_EVENTS.name, 'sns', { TABLE_NAME: table.tableName }, MAIL_EVENTS.timeoutSeconds);
  fn.allowTable(table, MAIL_EVENTS.actions, MAIL_EVENTS.indexes);
  fn.configureAsyncInvoke({ retryAttempts: 2, onFailure: new SqsDestination(queue) });
  topic.addSubscription(new LambdaSubscription(fn));
};

/**
 * The table stream's one reader (functions/stream-dispatch.ts): filtered to the records that start
 * background work (lib/events/stream-filters.ts), it sends each to its function's work queue and
 * may do nothing else (no table access). A batch it could not queue is retried, halved each time,
 * for as long as the stream keeps its records; then a pointer to them goes to the stream's dead
 * letters, which `npm run replay` reads back from the stream (docs/operations.md).
 */
export const dispatchStream = (host: BackgroundHost, table: ITable, streamArn: string, data: RosterDataStack): void => {
  const fn = host.backgroundFunction(
    STREAM_DISPATCH.name,
    'stream',
    Object.fromEntries(
      (Object.keys(WORK_QUEUES) as WorkFunction[]).map((name) => [
        queueUrlVariable(WORK_QUEUES[name].queue),
        data.workQueues[name].queueUrl,
      ]),
    ),
    STREAM_DISPATCH.timeoutSeconds,
  );
  for (const queue of Object.values(data.workQueues)) queue.grantSendMessages(fn);
  const stream = Table.fromTableAttributes(host, 'TableStream', { tableName: table.tableName, tableStreamArn: streamArn });
  fn.addEventSource(
    new DynamoEventSource(stream, {
      startingPosition: StartingPosition.TRIM_HORIZON,
      batchSize: STREAM_DISPATCH.batchSize,
      bisectBatchOnError: true,
      retryAttempts: STREAM_DISPATCH.retryAttempts,
      maxRecordAge: Duration.hours(STREAM_DISPATCH.maxRecordAgeHours),
      reportBatchItemFailures: true,
      onFailure: new SqsDlq(data.streamDeadLetters),
      filters: Object.values(STREAM_FILTERS).map((pattern) => FilterCriteria.filter(pattern)),
    }),
  );
  acknowledge('streamListing', fn.role ?? fn);
  host.monitoring.watchStream(fn, STREAM_DISPATCH.name);
};

/**
 * Feeds work function `fn` from its queue: partial batch responses, and at most its maxConcurrency
 * at once. It may also send to that queue: a record an outage has failed WORK_REQUEUE_AFTER times
 * is queued again as a new message (lib/events/queued-records.ts).
 */
export const receiveWork = (fn: Endpoint, data: RosterDataStack, name: WorkFunction): void => {
  data.workQueues[name].grantSendMessages(fn);
  fn.addEventSource(
    new SqsEventSource(data.workQueues[name], {
      batchSize: WORK_QUEUES[name].fn.batchSize,
      reportBatchItemFailures: true,
      maxConcurrency: WORK_QUEUES[name].fn.maxConcurrency,
    }),
  );
};

/**
 * The mailer (functions/mailer.ts) on its work queue of new outbox messages. A message not settled
 * comes back within seconds; after its last receive it goes to the dead letters (the outbox sweeper
 * delivers such messages anyway).
 */
export const deliverMail = (host: BackgroundHost, table: ITable, data: RosterDataStack, mail: MailSending): void => {
  const fn = host.backgroundFunction(
    MAILER.name,
    'queue',
    { TABLE_NAME: table.tableName, [queueUrlVariable('mail')]: data.workQueues.mailer.queueUrl, ...mail.environment },
    MAILER.timeoutSeconds,
  );
  fn.allowTable(table, MAILER.actions, []);
  mail.allow(fn);
  receiveWork(fn, data, 'mailer');
};

/** Runs `fn` every `minutes` (an EventBridge rule), never retried: a sweeper's next tick goes on from where the last stopped. */
export const runEvery = (host: BackgroundHost, ruleId: string, fn: Endpoint, job: { everyMinutes: number }, description: string): void => {
  new Rule(host, ruleId, {
    description,
    schedule: Schedule.rate(Duration.minutes(job.everyMinutes)),
    targets: [new LambdaFunction(fn, { retryAttempts: 0 })],
  });
};

/**
 * The outbox sweeper (functions/outbox-sweep.ts) on a schedule: it delivers the messages the
 * stream left behind (still PENDING, or SENDING past their lease), so it sends like the mailer
 * (same settings and SES grant, the mailer's actions) and queries gsi3 for them. No retry: the
 * next tick goes on. No reserved concurrency (see sweepInvites).
 */
export const sweepOutbox = (host: BackgroundHost, table: ITable, mail: MailSending): void => {
  const fn = host.backgroundFunction(
    OUTBOX_SWEEP.name,
    'schedule',
    { TABLE_NAME: table.tableName, ...mail.environment },
    OUTBOX_SWEEP.timeoutSeconds,
    OUTBOX_SWEEP.reserveSeconds * 1000,
  );
  const actions = [...new Set<DynamoAction>([...MAILER.actions, ...OUTBOX_SWEEP.actions])];
  fn.allowTable(table, actions, OUTBOX_SWEEP.indexes);
  mail.allow(fn);
  runEvery(host, 'OutboxSweepSchedule', fn, OUTBOX_SWEEP, "Delivers outbox messages the table's stream left behind (docs/mail.md)");
};

/**
 * The cleanup of deleted teams (functions/team-cleanup.ts, lib/teams/cleanup.ts) on its work queue
 * of the cleanup jobs' INSERT and MODIFY records (each run that ends with work left updates its
 * job, and that MODIFY starts the next run). Up to TEAM_CLEANUP.batchSize jobs an invocation, side
 * by side; the time budget (RESERVE_MS short of the timeout) ends a run cleanly first. A run that
 * fails comes back within seconds; after its last receive its record goes to the dead letters, and
 * the cleanup sweep starts the job again anyway. Its grants: exactly TEAM_CLEANUP.actions on the
 * table and gsi1 (a Query of the team's ended invites).
 */
export const cleanUpTeams = (host: BackgroundHost, table: ITable, data: RosterDataStack): void => {
  const fn = host.backgroundFunction(
    TEAM_CLEANUP.name,
    'queue',
    { TABLE_NAME: table.tableName, [queueUrlVariable('cleanup')]: data.workQueues['team-cleanup'].queueUrl },
    TEAM_CLEANUP.timeoutSeconds,
    TEAM_CLEANUP.reserveSeconds * 1000,
  );
  fn.allowTable(table, TEAM_CLEANUP.actions, TEAM_CLEANUP.indexes);
  receiveWork(fn, data, 'team-cleanup');
};

/**
 * The sweep of cleanup jobs whose run was lost (functions/cleanup-sweep.ts, lib/teams/cleanup-sweep.ts)
 * on a schedule: it touches each job due, and the touch's record starts its run. No retry: the next
 * tick goes on. Its grants: Query gsi3, UpdateItem.
 */
export const sweepCleanupJobs = (host: BackgroundHost, table: ITable): void => {
  const fn = host.backgroundFunction(
    CLEANUP_SWEEP.name,
    'schedule',
    { TABLE_NAME: table.tableName },
    CLEANUP_SWEEP.timeoutSeconds,
    CLEANUP_SWEEP.reserveSeconds * 1000,
  );
  fn.allowTable(table, CLEANUP_SWEEP.actions, CLEANUP_SWEEP.indexes);
  runEvery(
    host,
    'CleanupSweepSchedule',
    fn,
    CLEANUP_SWEEP,
    'Starts again the team cleanups whose run was lost (docs/data-model.md, "Team deletion")',
  );
};

/**
 * The sweeper of expired invites (functions/invite-sweep.ts, lib/teams/invites/sweep.ts) on a schedule.
 * No reserved concurrency (any reservation fails the deploy on an account whose quota is under
 * 100 + it): runs are bounded by their time budget and a watermark, and two that overlap only
 * repeat conditional writes. A failed run is not retried: the next tick starts where it stopped.
 * Its grants: the watermark item and the invites (GetItem, PutItem, UpdateItem) and gsi3 (Query).
 */
export const sweepInvites = (host: BackgroundHost, table: ITable): void => {
  const fn = host.backgroundFunction(
    INVITE_SWEEP.name,
    'schedule',
    { TABLE_NAME: table.tableName },
    INVITE_SWEEP.timeoutSeconds,
    INVITE_SWEEP.reserveSeconds * 1000,
  );
  fn.allowTable(table, INVITE_SWEEP.actions, INVITE_SWEEP.indexes);
  runEvery(
    host,
    'InviteSweepSchedule',
    fn,
    INVITE_SWEEP,
    'Takes expired invites out of the invite lists (docs/data-model.md, "Expired invites")',
  );
};

/**
 * The re-check of verified team domains (functions/domain-recheck.ts, lib/teams/domains/recheck.ts)
 * on a schedule. It looks up TXT records in DNS (the function's own resolver; no VPC). No reserved
 * concurrency (see sweepInvites); a failed run is not retried: the next tick finds what is due.
 */
export const recheckDomains = (host: BackgroundHost, table: ITable): void => {
  const fn = host.backgroundFunction(
    DOMAIN_RECHECK.name,
    'schedule',
    { TABLE_NAME: table.tableName },
    DOMAIN_RECHECK.timeoutSeconds,
    DOMAIN_RECHECK.reserveSeconds * 1000,
  );
  fn.allowTable(table, DOMAIN_RECHECK.actions, DOMAIN_RECHECK.indexes);
  runEvery(host, 'DomainRecheckSchedule', fn, DOMAIN_RECHECK, "Checks verified team domains' DNS proofs again (docs/domains.md)");
};
