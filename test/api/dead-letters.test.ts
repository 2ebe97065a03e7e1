/**
 * `npm run replay` (infra/dead-letters.ts): what the background gave up on is sent again. Deployed,
 * the stream reader's dead letters are pointers into the stream: here DynamoDB Local's stream is read
 * back for real, and SQS (whose calls are what is checked) is aws-sdk-client-mock. Locally, the
 * dead-letter files under DATA_DIR go through queues and functions in this process, against
 * DynamoDB Local, and the work gets done: a deleted team's cleanup runs to its end.
 */
import { mkdtempSync, existsSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudFormationClient, DescribeStackResourcesCommand } from '@aws-sdk/client-cloudformation';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  ListStreamsCommand,
} from '@aws-sdk/client-dynamodb-streams';
import {
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SQSClient,
  SendMessageBatchCommand,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import type { DynamoDBRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, describe, expect, it } from 'vitest';
import { QUEUE_IDS, type QueueRef, findQueues, partitionOf, replayDeployed, replayLocal } from '#infra/dead-letters.ts';
import { localDeadLetterFile } from '#infra/local-queue.ts';
import { toLambdaRecord } from '#infra/stream-poller.ts';
import { db } from '#lib/db/service.ts';
import { STREAM_DISPATCH } from '#lib/http/background.ts';
import { createTeam, signUp, useApi } from '../helpers/api.ts';

const api = useApi();
const region = 'us-east-1';
const streams = new DynamoDBStreamsClient({
  endpoint: process.env.DYNAMODB_ENDPOINT,
  region,
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});
afterAll(() => streams.destroy());

/** A team made and deleted: its cleanup job waits, as nothing reads the stream in this file. */
const deletedTeam = async (): Promise<number> => {
  const owner = await signUp(api, 'dl');
  const team = await createTeam(api, owner);
  expect((await api.call('DELETE', `/api/teams/${team.slug}`, { token: owner.token })).status).toBe(200);
  expect((await db().entities.teamCleanup.get({ teamId: team.id }).go()).data).not.toBeNull();
  return team.id;
};

/** The stream record that wrote team `teamId`'s cleanup job, with where it is in the stream. */
const jobRecord = async (teamId: number): Promise<{ record: DynamoDBRecord; shardId: string; streamArn: string }> => {
  const { Streams } = await streams.send(new ListStreamsCommand({}));
  const streamArn = Streams?.find((s) => s.TableName === process.env.TABLE_NAME)?.StreamArn as string;
  const { StreamDescription } = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
  for (const shard of StreamDescription?.Shards ?? []) {
    const shardId = shard.ShardId as string;
    let iterator = (
      await streams.send(new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shardId, ShardIteratorType: 'TRIM_HORIZON' }))
    ).ShardIterator;
    for (let empty = 0; iterator && empty < 3;) {
      const page = await streams.send(new GetRecordsCommand({ ShardIterator: iterator }));
      empty = page.Records?.length ? 0 : empty + 1;
      for (const r of page.Records ?? []) {
        const image = r.dynamodb?.NewImage;
        if (r.eventName === 'INSERT' && image?.__edb_e__?.S === 'teamCleanup' && image.teamId?.N === String(teamId))
          return { record: toLambdaRecord(r, streamArn, region), shardId, streamArn };
      }
      iterator = page.NextShardIterator;
    }
  }
  throw new Error(`no stream record of team ${teamId}'s cleanup job`);
};

const job = async (teamId: number) => (await db().entities.teamCleanup.get({ teamId }).go({ consistent: true })).data;

describe('replay of the deployed dead letters', () => {
  const ref = (id: string): QueueRef => ({
    url: `https://sqs.${region}.amazonaws.com/123456789012/RosterData-${id}`,
    arn: `arn:aws:sqs:${region}:123456789012:RosterData-${id}`,
  });
  const found = new Map<string, QueueRef>(
    [QUEUE_IDS.stream, ...Object.values(QUEUE_IDS.work), ...Object.values(QUEUE_IDS.deadLetters)].map((id) => [id, ref(id)]),
  );

  it("reads the stream's dead letters back from the stream, queues their records for their work, deletes them, and moves the queues' dead letters back", async () => {
    const teamId = await deletedTeam();
    const { record, shardId, streamArn } = await jobRecord(teamId);
    const sequence = record.dynamodb?.SequenceNumber as string;
    const sqs = mockClient(SQSClient);
    try {
      const pointer = {
        requestContext: { condition: 'RetryAttemptsExhausted' },
        DDBStreamBatchInfo: { shardId, startSequenceNumber: sequence, endSequenceNumber: sequence, streamArn, batchSize: 1 },
      };
      sqs
        .on(ReceiveMessageCommand)
        .resolvesOnce({
          Messages: [
            { MessageId: 'p1', ReceiptHandle: 'r1', Body: JSON.stringify(pointer) },
            { MessageId: 'p2', ReceiptHandle: 'r2', Body: 'not a pointer' },
          ],
        })
        .resolves({ Messages: [] });
      sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
      const lines: string[] = [];
      const report = await replayDeployed({
        sqs: new SQSClient({ region }),
        streams,
        found,
        region,
        queues: ['mail', 'cleanup', 'fanout'],
        log: (l) => lines.push(l),
      });
      expect(report).toEqual({
        streamBatches: 1,
        streamRecords: 1,
        streamLeft: 1,
        moved: ['MailDeadLetters', 'TeamCleanupDeadLetters', 'WebhookFanoutDeadLetters'],
      });
      const sends = sqs.commandCalls(SendMessageBatchCommand).map((c) => c.args[0].input);
      expect(sends.map((s) => s.QueueUrl)).toEqual([ref('CleanupQueue').url]);
      expect(sends[0]?.Entries?.map((e) => JSON.parse(e.MessageBody as string) as unknown)).toEqual([record]);
      // Only the pointer that was queued is deleted; the other stays for a person to look at.
      expect(sqs.commandCalls(DeleteMessageCommand).map((c) => c.args[0].input)).toEqual([
        { QueueUrl: ref('StreamDeadLetters').url, ReceiptHandle: 'r1' },
      ]);
      expect(sqs.commandCalls(StartMessageMoveTaskCommand).map((c) => c.args[0].input.SourceArn)).toEqual(
        ['MailDeadLetters', 'TeamCleanupDeadLetters', 'WebhookFanoutDeadLetters'].map((id) => ref(id).arn),
      );
      expect(lines.join('\n')).toContain('p2: not a stream batch pointer');
    } finally {
      sqs.restore();
    }
  });

  it('names queues in the partition of their region', () => {
    expect(['eu-west-1', 'cn-north-1', 'us-gov-west-1'].map(partitionOf)).toEqual(['aws', 'aws-cn', 'aws-us-gov']);
  });

  it("finds the data stack's queues by their logical ids, with their URLs and ARNs", async () => {
    const cloudFormation = mockClient(CloudFormationClient);
    try {
      cloudFormation.on(DescribeStackResourcesCommand).resolves({
        StackResources: [
          {
            LogicalResourceId: 'MailQueue1A2B3C4D',
            ResourceType: 'AWS::SQS::Queue',
            PhysicalResourceId: 'https://sqs.eu-west-1.amazonaws.com/123456789012/RosterData-MailQueue1A2B',
            Timestamp: new Date(),
            ResourceStatus: 'CREATE_COMPLETE',
            StackName: 'RosterData',
          },
          {
            LogicalResourceId: 'Table1A2B3C4D',
            ResourceType: 'AWS::DynamoDB::Table',
            PhysicalResourceId: 'RosterData-Table',
            Timestamp: new Date(),
            ResourceStatus: 'CREATE_COMPLETE',
            StackName: 'RosterData',
          },
        ],
      });
      const queues = await findQueues(new CloudFormationClient({ region: 'eu-west-1' }), 'RosterData');
      expect([...queues]).toEqual([
        [
          'MailQueue',
          {
            url: 'https://sqs.eu-west-1.amazonaws.com/123456789012/RosterData-MailQueue1A2B',
            arn: 'arn:aws:sqs:eu-west-1:123456789012:RosterData-MailQueue1A2B',
          },
        ],
      ]);
    } finally {
      cloudFormation.restore();
    }
  });
});

describe('replay of the local dead letters', () => {
  it(
    "sends the stream's and the queues' dead-letter files again through their functions: the cleanups run to their end, and the files are gone",
    { timeout: 120_000 },
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'roster-replay-'));
      const [first, second] = [await deletedTeam(), await deletedTeam()];
      const fromStream = (await jobRecord(first)).record;
      const fromQueue = (await jobRecord(second)).record;
      mkdirSync(join(dataDir, 'dead-letters'));
      writeFileSync(localDeadLetterFile(dataDir, STREAM_DISPATCH.name), `${JSON.stringify(fromStream)}\n`);
      writeFileSync(localDeadLetterFile(dataDir, 'cleanup'), `${JSON.stringify(fromQueue)}\n`);
      const result = await replayLocal({ dataDir, waitMs: 100_000, log: () => undefined });
      expect(result).toEqual({ replayed: 2, left: 0 });
      expect([await job(first), await job(second)]).toEqual([null, null]);
      expect(existsSync(localDeadLetterFile(dataDir, STREAM_DISPATCH.name))).toBe(false);
      expect(existsSync(localDeadLetterFile(dataDir, 'cleanup'))).toBe(false);
    },
  );
});
