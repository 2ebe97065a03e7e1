/**
 * `npm run replay` (scripts/replay.ts): sends again what Roster's background gave up on
 * (docs/operations.md, "Replaying dead letters").
 *
 * Deployed: the stream reader's dead letters hold no records, only where they were in the stream
 * (Lambda's DDBStreamBatchInfo): each is read back from the stream (it keeps records 24 hours),
 * queued for its work like any record (lib/events/stream-dispatch.ts), and deleted. The work
 * queues' dead letters (and, asked for, the webhook queue's) hold the messages themselves: SQS moves
 * them back to their queue (StartMessageMoveTask, the console's "redrive").
 *
 * Locally (`--local`): the files infra/local-queue.ts and infra/stream-poller.ts keep under
 * DATA_DIR/dead-letters are sent again through queues in this process, with their functions,
 * against DynamoDB Local; what is still not done after `waitMs` is written back.
 */
import { readFileSync, renameSync, rmSync } from 'node:fs';
import { type CloudFormationClient, DescribeStackResourcesCommand } from '@aws-sdk/client-cloudformation';
import { type DynamoDBStreamsClient, GetRecordsCommand, GetShardIteratorCommand, type _Record } from '@aws-sdk/client-dynamodb-streams';
import { DeleteMessageCommand, type SQSClient, ReceiveMessageCommand, StartMessageMoveTaskCommand } from '@aws-sdk/client-sqs';
import type { DynamoDBRecord } from 'aws-lambda';
import { QUEUE_NAMES, type QueueName, sqsQueue } from '#lib/events/queues.ts';
import { dispatch } from '#lib/events/stream-dispatch.ts';
import { STREAM_DISPATCH, WORK_QUEUES } from '#lib/http/background.ts';
import { type LocalQueue, keepDeadLetters, localDeadLetterFile, startLocalQueues } from './local-queue.ts';
import { toLambdaRecord } from './stream-poller.ts';

/** The data stack's queues by their construct ids (infra/data-stack.ts). */
export const QUEUE_IDS = {
  work: { mail: 'MailQueue', cleanup: 'CleanupQueue', fanout: 'FanoutQueue', webhook: 'WebhookQueue' },
  deadLetters: {
    mail: 'MailDeadLetters',
    cleanup: 'TeamCleanupDeadLetters',
    fanout: 'WebhookFanoutDeadLetters',
    webhook: 'WebhookDeadLetters',
  },
  stream: 'StreamDeadLetters',
} as const satisfies { work: Record<QueueName, string>; deadLetters: Record<QueueName, string>; stream: string };

/** Where a queue is, as CloudFormation names it. */
export interface QueueRef {
  readonly url: string;
  readonly arn: string;
}

/** The ARN partition of a region: China's and GovCloud's have their own. */
export const partitionOf = (region: string): string => {
  if (region.startsWith('cn-')) return 'aws-cn';
  if (region.startsWith('us-gov-')) return 'aws-us-gov';
  return 'aws';
};

/** The data stack's queues, found by logical id (CDK adds a hash to the construct id). */
export const findQueues = async (cloudFormation: CloudFormationClient, stackName: string): Promise<Map<string, QueueRef>> => {
  const { StackResources = [] } = await cloudFormation.send(new DescribeStackResourcesCommand({ StackName: stackName }));
  const found = new Map<string, QueueRef>();
  for (const resource of StackResources) {
    if (resource.ResourceType !== 'AWS::SQS::Queue' || !resource.PhysicalResourceId || !resource.LogicalResourceId) continue;
    // The physical id of a queue is its URL: https://sqs.<region>.amazonaws.com/<account>/<name>.
    const url = resource.PhysicalResourceId;
    const [, , host = '', account = '', name = ''] = url.split('/');
    const region = host.split('.')[1] ?? '';
    found.set(resource.LogicalResourceId.replace(/[0-9A-F]{8}$/, ''), {
      url,
      arn: `arn:${partitionOf(region)}:sqs:${region}:${account}:${name}`,
    });
  }
  return found;
};

/** Where Lambda's stream event source put a batch it gave up on. */
interface StreamBatchInfo {
  shardId: string;
  startSequenceNumber: string;
  endSequenceNumber: string;
  streamArn: string;
}

const batchInfoOf = (body: string): StreamBatchInfo | undefined => {
  try {
    const info = (JSON.parse(body) as { DDBStreamBatchInfo?: Partial<StreamBatchInfo> }).DDBStreamBatchInfo;
    return info?.shardId && info.startSequenceNumber && info.endSequenceNumber && info.streamArn ? (info as StreamBatchInfo) : undefined;
  } catch {
    return undefined;
  }
};

/** Empty pages read in a row before a shard counts as read to its end (an open shard answers empty pages). */
const EMPTY_PAGES = 5;

/** The records of a batch, read back from the stream (throws TrimmedDataAccessException once the stream no longer keeps them). */
export const readStreamBatch = async (streams: DynamoDBStreamsClient, info: StreamBatchInfo, region: string): Promise<DynamoDBRecord[]> => {
  const { ShardIterator } = await streams.send(
    new GetShardIteratorCommand({
      StreamArn: info.streamArn,
      ShardId: info.shardId,
      ShardIteratorType: 'AT_SEQUENCE_NUMBER',
      SequenceNumber: info.startSequenceNumber,
    }),
  );
  const end = BigInt(info.endSequenceNumber);
  const records: DynamoDBRecord[] = [];
  let iterator = ShardIterator;
  for (let empty = 0; iterator && empty < EMPTY_PAGES;) {
    const page = await streams.send(new GetRecordsCommand({ ShardIterator: iterator }));
    const found: _Record[] = page.Records ?? [];
    empty = found.length === 0 ? empty + 1 : 0;
    for (const record of found) {
      if (BigInt(record.dynamodb?.SequenceNumber ?? '0') > end) return records;
      records.push(toLambdaRecord(record, info.streamArn, region));
    }
    iterator = page.NextShardIterator;
  }
  return records;
};

export interface ReplayReport {
  /** Stream batches read back and queued (their records). */
  streamBatches: number;
  streamRecords: number;
  /** Stream batches the stream no longer keeps (older than 24 hours), or unreadable: left in the dead letters. */
  streamLeft: number;
  /** SQS move tasks started, by dead-letter queue. */
  moved: string[];
}

/** Deployed: the stream's dead letters read back and queued; the other dead letters moved back to `queues`. */
export const replayDeployed = async (options: {
  sqs: SQSClient;
  streams: DynamoDBStreamsClient;
  found: Map<string, QueueRef>;
  region: string;
  queues: readonly QueueName[];
  log: (line: string) => void;
}): Promise<ReplayReport> => {
  const { sqs, streams, found, region, log } = options;
  const need = (id: string): QueueRef => {
    const ref = found.get(id);
    if (!ref) throw new Error(`no queue ${id} in the data stack: is it this version's stack?`);
    return ref;
  };
  const report: ReplayReport = { streamBatches: 0, streamRecords: 0, streamLeft: 0, moved: [] };
  const deadLetters = need(QUEUE_IDS.stream);
  const workQueue = (fn: keyof typeof WORK_QUEUES) => sqsQueue(need(QUEUE_IDS.work[WORK_QUEUES[fn].queue]).url, sqs);
  // Received messages stay hidden for the visibility timeout: each is seen once per run.
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: deadLetters.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 300 }),
    );
    if (Messages.length === 0) break;
    for (const message of Messages) {
      const info = batchInfoOf(message.Body ?? '');
      if (!info) {
        log(`${message.MessageId}: not a stream batch pointer; left in ${QUEUE_IDS.stream}`);
        report.streamLeft++;
        continue;
      }
      let records: DynamoDBRecord[];
      try {
        records = await readStreamBatch(streams, info, region);
      } catch (error) {
        log(
          `${message.MessageId}: shard ${info.shardId} ${info.startSequenceNumber}–${info.endSequenceNumber} not read (${(error as Error).name}): left; the sweeps cover its work`,
        );
        report.streamLeft++;
        continue;
      }
      const { batchItemFailures } = await dispatch(records, workQueue);
      if (batchItemFailures.length > 0) throw new Error(`${message.MessageId}: ${batchItemFailures.length} records not queued; run again`);
      await sqs.send(new DeleteMessageCommand({ QueueUrl: deadLetters.url, ReceiptHandle: message.ReceiptHandle }));
      report.streamBatches++;
      report.streamRecords += records.length;
      log(`${message.MessageId}: ${records.length} records of shard ${info.shardId} queued again`);
    }
  }
  for (const name of options.queues) {
    const source = need(QUEUE_IDS.deadLetters[name]);
    await sqs.send(new StartMessageMoveTaskCommand({ SourceArn: source.arn }));
    report.moved.push(QUEUE_IDS.deadLetters[name]);
    log(`${QUEUE_IDS.deadLetters[name]}: moving its messages back to ${QUEUE_IDS.work[name]}`);
  }
  return report;
};

/** Local: every dead-letter file under `dataDir` sent again; answers how many were done and how many were written back. */
export const replayLocal = async (options: {
  dataDir: string;
  waitMs: number;
  log: (line: string) => void;
}): Promise<{ replayed: number; left: number }> => {
  const { dataDir, log } = options;
  // Each file is moved aside while it is replayed (new dead letters go to a fresh one) and removed
  // only at the end, once what was not done has been written back: a crash meanwhile loses nothing.
  const taken: string[] = [];
  const take = (name: string): string[] => {
    const file = localDeadLetterFile(dataDir, name);
    const taking = `${file}.replaying`;
    try {
      renameSync(file, taking);
    } catch {
      return [];
    }
    taken.push(taking);
    return readFileSync(taking, 'utf8').split('\n').filter(Boolean);
  };
  const queues = startLocalQueues(Object.fromEntries(QUEUE_NAMES.map((name) => [name, { dataDir }])));
  const byName = (name: QueueName) => queues.find((q) => q.name === name) as LocalQueue;
  let replayed = 0;
  const records = take(STREAM_DISPATCH.name).map((line) => JSON.parse(line) as DynamoDBRecord);
  if (records.length > 0) {
    const { batchItemFailures } = await dispatch(records, (fn) => byName(WORK_QUEUES[fn].queue));
    if (batchItemFailures.length > 0) throw new Error('local queues refused records');
    log(`${records.length} stream records queued again`);
    replayed += records.length;
  }
  for (const queue of queues) {
    const bodies = take(queue.name);
    if (bodies.length === 0) continue;
    await queue.send(bodies);
    log(`${bodies.length} ${queue.name} messages queued again`);
    replayed += bodies.length;
  }
  const deadline = Date.now() + options.waitMs;
  while (queues.some((q) => q.size() > 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  let left = 0;
  for (const queue of queues) {
    // Stopped first: a batch under way ends, and what it finished is no longer pending.
    await queue.stop();
    const pending = queue.pending();
    if (pending.length === 0) continue;
    keepDeadLetters(localDeadLetterFile(dataDir, queue.name), pending);
    log(`${pending.length} ${queue.name} messages not done within the wait: written back`);
    left += pending.length;
  }
  for (const file of taken) rmSync(file);
  return { replayed, left };
};
