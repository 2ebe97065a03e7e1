import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import {
  type Attribute,
  AttributeType,
  BillingMode,
  ProjectionType,
  StreamViewType,
  Table,
  TableEncryption,
} from 'aws-cdk-lib/aws-dynamodb';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { StringParameter } from 'aws-cdk-lib/aws-ssm';
import type { Construct } from 'constructs';
import { ATTRIBUTE_DEFINITIONS, INDEXES, KEYS, STREAM_VIEW_TYPE, TTL_ATTRIBUTE } from '#lib/db/entities/table.ts';
import {
  WEBHOOK_ATTEMPTS,
  WEBHOOK_DELIVERY,
  WORK_QUEUES,
  WORK_RETENTION_DAYS,
  type WorkFunction,
  workVisibilitySeconds,
} from '#lib/http/background.ts';
import { MailIdentity } from './mail-identity.ts';
import { acknowledge } from './nag-acknowledgements.ts';
import { deployOptions } from './options.ts';

/** lib/db/entities/table.ts names every key attribute; this gives each its CDK type. */
const attribute = (name: string): Attribute => {
  const definition = ATTRIBUTE_DEFINITIONS.find((d) => d.AttributeName === name);
  if (definition?.AttributeType !== 'S') throw new Error(`no string attribute ${name} in lib/db/entities/table.ts`);
  return { name, type: AttributeType.STRING };
};

/**
 * Roster's state, in a stack of its own with termination protection, so that replacing or
 * deleting the functions' stack (infra/stack.ts) cannot touch it: the DynamoDB table, the
 * token signing keys in Secrets Manager, the dead-letter queues (what they hold is work still to
 * do) and, with `-c sesDomain`, the SES domain identity (its DKIM records are in the domain's DNS).
 * Nothing here refers to the functions' stack; that one imports these by ARN and name.
 */
/** The SSM parameter that holds the table's stream ARN, for the data stack named `stackName`. */
export const streamArnParameter = (stackName: string): string => `/${stackName}/table-stream-arn`;

export class RosterDataStack extends Stack {
  readonly table: Table;
  /** The private signing keys (a JSON keyset, docs/keys.md), rotated from the functions' stack. */
  readonly signingKey: Secret;
  /**
   * The stream's one reader (functions/stream-dispatch.ts) sends each record that starts background
   * work to the work queue of its function (lib/http/background.ts WORK_QUEUES): new outbox messages
   * to the mailer's, cleanup jobs to the team cleanup's, audit entries to the webhook fan-out's. A
   * record that fails comes back after a few seconds; after maxReceives, it moves to the queue's
   * dead letters. Here, with the other state: what they hold is work still to do.
   */
  readonly workQueues: Readonly<Record<WorkFunction, Queue>>;
  /** The mailer's records that failed every receive (the outbox sweeper sends their mail anyway). */
  readonly mailDeadLetters: Queue;
  /** The cleanup jobs' records that failed every receive (the cleanup sweep starts them again). */
  readonly teamCleanupDeadLetters: Queue;
  /** Where the stream's reader puts what it could not queue after every retry: pointers to the stream's records (kept 24 hours). */
  readonly streamDeadLetters: Queue;
  /**
   * SES bounce and complaint notifications the mail-events function failed on every retry. Made
   * with any mail settings (an empty queue costs nothing), so that turning SES off removes nothing
   * the functions' stack imported.
   */
  readonly mailEventsDeadLetters: Queue;
  /**
   * The webhook messages (lib/events/webhooks/queue.ts): one per event and endpoint, received by the
   * delivery function, retried on the schedule of WEBHOOK_RETRY_DELAYS_SECONDS by setting each
   * failed message's visibility, and moved to webhookDeadLetters after WEBHOOK_ATTEMPTS receives.
   * Here, with the other state: a message waits up to 28 hours for its next attempt.
   */
  readonly webhookQueue: Queue;
  /** Webhook messages that failed every attempt. */
  readonly webhookDeadLetters: Queue;
  /** Audit entries' records the webhook fan-out failed on every receive. */
  readonly webhookFanoutDeadLetters: Queue;
  /** The SES domain identity, when the stack makes it (`-c sesDomain`). */
  readonly mailIdentity: MailIdentity | undefined;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, { ...props, terminationProtection: true });
    const { mail } = deployOptions(this.node);

    this.table = new Table(this, 'Table', {
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
      this.table.addGlobalSecondaryIndex({
        indexName,
        partitionKey: attribute(index.pk),
        sortKey: attribute(index.sk),
        projectionType: ProjectionType.ALL,
      });
    }

    // CloudFormation creates it holding an empty keyset (plus a generated filler, which
    // CloudFormation requires with a template); the rotation schedule (functions' stack) runs at
    // once on creation and adds the first key. The templates and the environment hold only the ARN.
    this.signingKey = new Secret(this, 'SigningKey', {
      description: 'Roster access-token signing keys (Ed25519 JWK keyset), rotated by the KeysRotate function',
      generateSecretString: {
        secretStringTemplate: JSON.stringify({ keys: [] }),
        generateStringKey: 'bootstrap',
        passwordLength: 32,
        excludePunctuation: true,
      },
    });
    acknowledge('rotatedFromFunctionStack', this.signingKey);

    // A queue's redrive target: cdk-nag sees that, so it needs no acknowledgement.
    this.mailDeadLetters = this.deadLetterQueue('MailDeadLetters', false);
    this.teamCleanupDeadLetters = this.deadLetterQueue('TeamCleanupDeadLetters', false);
    this.webhookFanoutDeadLetters = this.deadLetterQueue('WebhookFanoutDeadLetters', false);
    this.streamDeadLetters = this.deadLetterQueue('StreamDeadLetters');
    this.mailEventsDeadLetters = this.deadLetterQueue('MailEventsDeadLetters');
    this.webhookDeadLetters = this.deadLetterQueue('WebhookDeadLetters', false);
    const workQueue = (id: string, name: WorkFunction, deadLetters: Queue): Queue =>
      new Queue(this, id, {
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        visibilityTimeout: Duration.seconds(workVisibilitySeconds(WORK_QUEUES[name].fn)),
        retentionPeriod: Duration.days(WORK_RETENTION_DAYS),
        deadLetterQueue: { queue: deadLetters, maxReceiveCount: WORK_QUEUES[name].maxReceives },
      });
    this.workQueues = {
      mailer: workQueue('MailQueue', 'mailer', this.mailDeadLetters),
      'team-cleanup': workQueue('CleanupQueue', 'team-cleanup', this.teamCleanupDeadLetters),
      'webhook-fanout': workQueue('FanoutQueue', 'webhook-fanout', this.webhookFanoutDeadLetters),
    };
    this.webhookQueue = new Queue(this, 'WebhookQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(WEBHOOK_DELIVERY.visibilitySeconds),
      retentionPeriod: Duration.days(WEBHOOK_DELIVERY.retentionDays),
      deadLetterQueue: { queue: this.webhookDeadLetters, maxReceiveCount: WEBHOOK_ATTEMPTS },
    });
    this.mailIdentity = mail.transport === 'ses' && mail.createIdentity ? new MailIdentity(this, 'MailIdentity', mail.identity) : undefined;

    // Exported whether or not the functions' stack imports them now: what it imports changes with
    // the SES settings and `-c tableName` (a restored table), and this stack deploys first, so an
    // export that went away with an import would be removed while the deployed functions' stack
    // still imports it, which CloudFormation refuses (the deploy fails).
    const queues = [
      ...Object.values(this.workQueues),
      this.streamDeadLetters,
      this.mailDeadLetters,
      this.teamCleanupDeadLetters,
      this.mailEventsDeadLetters,
      this.webhookQueue,
      this.webhookDeadLetters,
      this.webhookFanoutDeadLetters,
    ];
    for (const value of [
      this.table.tableName,
      this.table.tableArn,
      this.table.tableStreamArn as string,
      this.signingKey.secretArn,
      ...queues.flatMap((queue) => [queue.queueArn, queue.queueName]),
      ...[this.webhookQueue, ...Object.values(this.workQueues)].map((queue) => queue.queueUrl),
    ]) {
      this.exportValue(value);
    }

    // The stream's ARN, read by the functions' stack when it deploys rather than imported: an export
    // cannot change while imported, so a stream made anew (turned off and on, another view type)
    // would block both stacks. The export above stays one release, for stacks that still import it.
    new StringParameter(this, 'TableStreamArn', {
      parameterName: streamArnParameter(this.stackName),
      stringValue: this.table.tableStreamArn as string,
      description: "The Roster table's stream: its reader's event source (the functions' stack)",
    });

    new CfnOutput(this, 'TableName', { value: this.table.tableName });
  }

  /** Where failed work waits for a person, for two weeks (the longest SQS keeps a message). */
  private deadLetterQueue(id: string, acknowledged = true): Queue {
    const queue = new Queue(this, id, { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true, retentionPeriod: Duration.days(14) });
    if (acknowledged) acknowledge('deadLetterQueue', queue);
    return queue;
  }
}
