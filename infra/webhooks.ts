import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { auditEntry } from '#lib/db/entities/audit.ts';
import { team } from '#lib/db/entities/teams.ts';
import { webhookDelivery, webhookEndpoint, webhookFanout, webhookSweep } from '#lib/db/entities/webhooks.ts';
import { partitionPattern } from '#lib/db/partition-patterns.ts';
import { queueUrlVariable } from '#lib/events/queues.ts';
import { WEBHOOK_DELIVERY, WEBHOOK_FANOUT, WEBHOOK_SWEEP } from '#lib/http/background.ts';
import { type BackgroundHost, receiveWork, runEvery } from './background.ts';
import type { RosterDataStack } from './data-stack.ts';

/**
 * The partitions the webhook functions may touch (IAM StringLike patterns of their keys): a team's
 * endpoints (and its endpoint count), its audit log, the receipts of its sent entries and its team
 * item, and an endpoint's delivery log. Not users, sessions, keys or claims: the delivery function
 * is the one that talks to hosts the teams choose.
 */
export const WEBHOOK_PARTITIONS = {
  endpoints: partitionPattern(webhookEndpoint(), { teamId: 1, endpointId: 1 }),
  auditLog: partitionPattern(auditEntry(), { teamId: 1, entryId: 'x' }),
  team: partitionPattern(team(), { teamId: 1 }),
  deliveries: partitionPattern(webhookDelivery(), { teamId: 1, endpointId: 1, deliveryId: 'x' }),
  receipts: partitionPattern(webhookFanout(), { teamId: 1, entryId: 'x' }),
  sweepPlace: partitionPattern(webhookSweep(), { sweep: 'webhooks' }),
} as const;

/**
 * The attributes the sweep may name (`dynamodb:Attributes`) when it lists the teams in gsi3 and
 * when it moves a team's watermark: gsi3 also holds pending invites and outbox messages (addresses),
 * and the webhook partition the endpoints (URLs, secrets), which these keep out of its reach.
 */
export const WEBHOOK_SWEEP_ATTRIBUTES = {
  teamList: ['gsi3pk', 'gsi3sk', 'pk', 'sk', 'teamId', 'endpoints', 'sweepFrom', 'sweepAfter', '__edb_e__', '__edb_v__'],
  watermark: ['pk', 'sk', 'teamId', 'sweepFrom', 'sweepAfter', '__edb_e__', '__edb_v__'],
} as const;

/**
 * Webhooks (docs/webhooks.md): the fan-out (functions/webhook-fanout.ts) on its work queue of new
 * audit entries sends one message per subscribed endpoint to the webhook queue and writes the
 * entries' receipts; a batch it fails on comes back within seconds, and after its last receive
 * goes to the dead letters (the sweep below sends its entries anyway). The delivery
 * (functions/webhook-delivery.ts) receives the queue's messages, 10 at a time, reports each failed
 * one after setting its visibility to the next retry delay (the event source's grants include
 * ChangeMessageVisibility); the queue moves a message to its dead letters after its last attempt.
 * At most 2 deliveries run at once (the least SQS allows): a burst of events waits in the queue
 * rather than take an account's concurrency (as low as 10) from the API.
 */
export const sendWebhooks = (host: BackgroundHost, table: ITable, data: RosterDataStack): void => {
  const fanOut = host.backgroundFunction(
    WEBHOOK_FANOUT.name,
    'queue',
    {
      TABLE_NAME: table.tableName,
      WEBHOOK_QUEUE_URL: data.webhookQueue.queueUrl,
      [queueUrlVariable('fanout')]: data.workQueues['webhook-fanout'].queueUrl,
    },
    WEBHOOK_FANOUT.timeoutSeconds,
  );
  fanOut.allowTablePartitions(table, ['Query'], [WEBHOOK_PARTITIONS.endpoints]);
  fanOut.allowTablePartitions(table, ['BatchGetItem', 'BatchWriteItem'], [WEBHOOK_PARTITIONS.receipts]);
  data.webhookQueue.grantSendMessages(fanOut);
  receiveWork(fanOut, data, 'webhook-fanout');

  const delivery = host.backgroundFunction(
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
};

/**
 * The webhook sweeper (functions/webhook-sweep.ts, lib/events/webhooks/sweep.ts) on a schedule: it
 * sends the audit entries whose fan-out was lost. No retry: the next tick goes on from each team's
 * watermark. Its grants: a Query of gsi3 (the teams' keys, counts and watermarks only), and on
 * the webhook partitions only the fan-out's reads and receipts, its audit-log Query, the
 * watermark's UpdateItem (those attributes only) and its place in the list; sending to the webhook
 * queue.
 */
export const sweepWebhooks = (host: BackgroundHost, table: ITable, data: RosterDataStack): void => {
  const fn = host.backgroundFunction(
    WEBHOOK_SWEEP.name,
    'schedule',
    { TABLE_NAME: table.tableName, WEBHOOK_QUEUE_URL: data.webhookQueue.queueUrl },
    WEBHOOK_SWEEP.timeoutSeconds,
    WEBHOOK_SWEEP.reserveSeconds * 1000,
  );
  const { endpoints, auditLog, receipts, sweepPlace } = WEBHOOK_PARTITIONS;
  fn.allowTablePartitions(table, ['Query'], [endpoints, auditLog, receipts]);
  fn.allowTablePartitions(table, ['BatchGetItem', 'BatchWriteItem'], [receipts]);
  fn.allowTablePartitions(table, ['GetItem', 'PutItem'], [sweepPlace]);
  // The watermark: those attributes of the team's webhook partition, nothing read back.
  fn.addToRolePolicy(
    new PolicyStatement({
      actions: ['dynamodb:UpdateItem'],
      resources: [table.tableArn],
      conditions: {
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [endpoints] },
        'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...WEBHOOK_SWEEP_ATTRIBUTES.watermark] },
        StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
      },
    }),
  );
  // The team list: gsi3 only (not the table), those attributes only.
  fn.addToRolePolicy(
    new PolicyStatement({
      actions: ['dynamodb:Query'],
      resources: WEBHOOK_SWEEP.indexes.map((i) => `${table.tableArn}/index/${i}`),
      conditions: {
        'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...WEBHOOK_SWEEP_ATTRIBUTES.teamList] },
        StringEqualsIfExists: { 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' },
      },
    }),
  );
  data.webhookQueue.grantSendMessages(fn);
  runEvery(host, 'WebhookSweepSchedule', fn, WEBHOOK_SWEEP, 'Sends the webhook events whose fan-out was lost (docs/webhooks.md)');
};
