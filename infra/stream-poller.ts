/**
 * Local mode's stand-in for Lambda's DynamoDB stream event source of the stream's one reader
 * (functions/stream-dispatch.ts, which sends each record to its work queue: infra/local-queue.ts
 * runs those here). It reads DynamoDB Local's stream of the table and invokes the reader with the
 * DynamoDBStreamEvent Lambda would send: only the records one of its filters passes
 * (lib/events/stream-filters.ts; the others are skipped, as Lambda drops them), and a context whose
 * remaining time counts down from the function's timeout. Per shard, in order, batches of at most
 * STREAM_DISPATCH.batchSize records; as Lambda does, a batch with a failed record
 * (batchItemFailures) is retried from that record on, with exponential backoff, and after
 * STREAM_DISPATCH.retryAttempts retries its records are dead-lettered: logged as an error, and
 * appended to DATA_DIR/dead-letters/stream-dispatch.jsonl, which `npm run replay -- --local` sends
 * again. The last sequence number handled per shard is kept in DATA_DIR/stream-checkpoint.json, so
 * a restarted server goes on after it instead of starting over.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DescribeTableCommand, DynamoDBClient, UpdateTableCommand } from '@aws-sdk/client-dynamodb';
import {
  type AttributeValue,
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  ExpiredIteratorException,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record,
  type Shard,
  TrimmedDataAccessException,
} from '@aws-sdk/client-dynamodb-streams';
import type { Context, AttributeValue as LambdaValue, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { log } from '#lib/core/log.ts';
import { STREAM_VIEW_TYPE } from '#lib/db/entities/table.ts';
import { lambdaContext } from '#lib/http/apigw.ts';
import { consumersOf } from '#lib/events/stream-filters.ts';
import { STREAM_DISPATCH } from '#lib/http/background.ts';
import { keepDeadLetters, localDeadLetterFile } from './local-queue.ts';

export type StreamHandler = (event: DynamoDBStreamEvent, context: Context) => Promise<DynamoDBBatchResponse | undefined>;

export interface StreamPollerOptions {
  endpoint: string;
  tableName: string;
  /** Where the checkpoint files live. */
  dataDir: string;
  /** Default: functions/stream-dispatch.ts, loaded once like a warm Lambda. */
  handler?: StreamHandler;
  region?: string;
  /** Pause between polls of a shard that had nothing new. */
  pollMs?: number;
  /** Invocations of one record before it is dead-lettered; default the deployed retries plus the first. */
  maxAttempts?: number;
  /** First retry delay; it doubles with each retry up to maxDelayMs. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** How often the shard list is read again (new shards appear as old ones close). */
  describeEveryMs?: number;
}

export interface StreamPoller {
  streamArn: string;
  /** Stops polling (a retry wait is cut short; that batch is not checkpointed) and waits for the loop to end. */
  stop: () => Promise<void>;
}

interface Checkpoint {
  streamArn: string;
  /** Shard id → the last sequence number handled there. */
  shards: Record<string, string | undefined>;
}

const CHECKPOINT_FILE = 'stream-checkpoint.json';

const readCheckpoint = (dataDir: string, file: string, streamArn: string): Checkpoint => {
  try {
    const saved = JSON.parse(readFileSync(join(dataDir, file), 'utf8')) as Checkpoint;
    if (saved.streamArn === streamArn && typeof saved.shards === 'object' && saved.shards !== null) return saved;
  } catch {
    // none yet, or unreadable: start from the oldest record (delivery is idempotent per message)
  }
  return { streamArn, shards: {} };
};

const writeCheckpoint = (dataDir: string, name: string, checkpoint: Checkpoint): void => {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, name);
  writeFileSync(`${file}.tmp`, JSON.stringify(checkpoint));
  renameSync(`${file}.tmp`, file);
};

/** The stream's attribute values as Lambda's JSON has them (binary as base64). */
const toLambdaValue = (value: AttributeValue): LambdaValue => {
  const v = value as unknown as Record<string, unknown>;
  const base64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
  if (v.B instanceof Uint8Array) return { B: base64(v.B) };
  if (Array.isArray(v.BS)) return { BS: (v.BS as Uint8Array[]).map(base64) };
  if (v.M !== undefined) return { M: toLambdaImage(v.M as Record<string, AttributeValue>) };
  if (Array.isArray(v.L)) return { L: (v.L as AttributeValue[]).map(toLambdaValue) };
  return v as LambdaValue;
};
const toLambdaImage = (image: Record<string, AttributeValue>): Record<string, LambdaValue> =>
  Object.fromEntries(Object.entries(image).map(([k, v]) => [k, toLambdaValue(v)]));

/** One stream record as the Lambda event source delivers it. */
export const toLambdaRecord = (record: _Record, streamArn: string, region: string): DynamoDBRecord => {
  const s = record.dynamodb ?? {};
  return {
    eventID: record.eventID,
    eventName: record.eventName,
    eventVersion: record.eventVersion ?? '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: record.awsRegion ?? region,
    eventSourceARN: streamArn,
    dynamodb: {
      ...(s.ApproximateCreationDateTime ? { ApproximateCreationDateTime: Math.floor(s.ApproximateCreationDateTime.getTime() / 1000) } : {}),
      ...(s.Keys ? { Keys: toLambdaImage(s.Keys) } : {}),
      ...(s.NewImage ? { NewImage: toLambdaImage(s.NewImage) } : {}),
      ...(s.OldImage ? { OldImage: toLambdaImage(s.OldImage) } : {}),
      SequenceNumber: s.SequenceNumber,
      SizeBytes: s.SizeBytes,
      StreamViewType: s.StreamViewType,
    },
  } as DynamoDBRecord;
};

/** The table's stream ARN; enables the stream first on a table made before streams were on. */
const streamArnOf = async (endpoint: string, tableName: string, region: string): Promise<string> => {
  const client = new DynamoDBClient({ endpoint, region, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.StreamSpecification?.StreamEnabled && Table.LatestStreamArn) return Table.LatestStreamArn;
    const updated = await client.send(
      new UpdateTableCommand({ TableName: tableName, StreamSpecification: { StreamEnabled: true, StreamViewType: STREAM_VIEW_TYPE } }),
    );
    const arn = updated.TableDescription?.LatestStreamArn;
    if (!arn) throw new Error(`table ${tableName} has no stream after enabling it`);
    return arn;
  } finally {
    client.destroy();
  }
};

/** Starts polling the table's stream for its reader; resolves once the stream is found (the loop runs on). */
export const startStreamPoller = async (options: StreamPollerOptions): Promise<StreamPoller> => {
  const fn = STREAM_DISPATCH.name;
  const checkpointName = CHECKPOINT_FILE;
  const region = options.region ?? process.env.AWS_REGION ?? 'us-east-1';
  const pollMs = options.pollMs ?? 200;
  const batchSize = STREAM_DISPATCH.batchSize;
  const maxAttempts = options.maxAttempts ?? STREAM_DISPATCH.retryAttempts + 1;
  const baseDelayMs = options.baseDelayMs ?? 500;
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  const describeEveryMs = options.describeEveryMs ?? 5_000;

  const streamArn = await streamArnOf(options.endpoint, options.tableName, region);
  const streams = new DynamoDBStreamsClient({
    endpoint: options.endpoint,
    region,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const checkpoint = readCheckpoint(options.dataDir, checkpointName, streamArn);
  const stopping = new AbortController();
  const stopped = () => stopping.signal.aborted;
  const pause = (ms: number) => sleep(ms, undefined, { signal: stopping.signal }).catch(() => undefined);

  let loaded: Promise<StreamHandler> | undefined;
  const handler = (): Promise<StreamHandler> =>
    options.handler
      ? Promise.resolve(options.handler)
      : (loaded ??= Promise.all([import('#functions/stream-dispatch.ts'), import('#lib/http/server.ts')]).then(
          ([module, server]) =>
            (event: DynamoDBStreamEvent) =>
              server.invocation.run({ functionName: fn }, () => module.handler(event)),
        ));

  /** The records to retry: from the first the handler reported failed on, as Lambda resumes a shard; all of them when it threw or answered nonsense. */
  const invoke = async (records: DynamoDBRecord[]): Promise<DynamoDBRecord[]> => {
    const context = lambdaContext(`roster-${fn}`, STREAM_DISPATCH.timeoutSeconds * 1000, records[0]?.eventID ?? 'stream');
    try {
      const result = await (await handler())({ Records: records }, context);
      const ids = new Set((result?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
      const positions = [...ids].map((id) => records.findIndex((r) => r.dynamodb?.SequenceNumber === id));
      if (positions.some((i) => i < 0)) return records;
      return positions.length === 0 ? [] : records.slice(Math.min(...positions));
    } catch (error) {
      log.error('stream handler threw; the whole batch is retried', error, { function: fn, records: records.length });
      return records;
    }
  };

  /** Delivers one batch with retries; false if stopped before it was done (not to be checkpointed). */
  const handleBatch = async (records: DynamoDBRecord[]): Promise<boolean> => {
    let pending = records;
    for (let attempt = 1; ; attempt++) {
      pending = await invoke(pending);
      if (pending.length === 0) return true;
      if (attempt >= maxAttempts) break;
      await pause(Math.min(baseDelayMs * 2 ** (attempt - 1), maxDelayMs));
      if (stopped()) return false;
    }
    keepDeadLetters(
      localDeadLetterFile(options.dataDir, fn),
      pending.map((r) => JSON.stringify(r)),
    );
    for (const r of pending) {
      log.error('stream record dead-lettered after the last attempt', new Error('not queued'), {
        function: fn,
        sequenceNumber: r.dynamodb?.SequenceNumber,
        eventName: r.eventName,
        attempts: maxAttempts,
      });
    }
    return true;
  };

  interface ShardState {
    shard: Shard;
    iterator: string | undefined;
    done: boolean;
  }
  const shards = new Map<string, ShardState>();

  const describe = async () => {
    let start: string | undefined;
    do {
      const { StreamDescription } = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: start }));
      for (const shard of StreamDescription?.Shards ?? []) {
        if (shard.ShardId && !shards.has(shard.ShardId)) shards.set(shard.ShardId, { shard, iterator: undefined, done: false });
      }
      start = StreamDescription?.LastEvaluatedShardId;
    } while (start);
  };

  const iteratorFor = async (shardId: string): Promise<string | undefined> => {
    const after = checkpoint.shards[shardId];
    try {
      const input = after
        ? { StreamArn: streamArn, ShardId: shardId, ShardIteratorType: 'AFTER_SEQUENCE_NUMBER' as const, SequenceNumber: after }
        : { StreamArn: streamArn, ShardId: shardId, ShardIteratorType: 'TRIM_HORIZON' as const };
      return (await streams.send(new GetShardIteratorCommand(input))).ShardIterator;
    } catch (error) {
      if (!(error instanceof TrimmedDataAccessException) || !after) throw error;
      // The checkpoint is older than the stream keeps: everything there now is new to us.
      checkpoint.shards[shardId] = undefined;
      return iteratorFor(shardId);
    }
  };

  /** A shard is read after its parent is done (or gone), as Lambda keeps a key's changes in order. */
  const ready = (state: ShardState) => {
    const parent = state.shard.ParentShardId ? shards.get(state.shard.ParentShardId) : undefined;
    return !state.done && (!parent || parent.done);
  };

  /** One GetRecords on a shard and its batch; true when it returned records. */
  const pollShard = async (id: string, state: ShardState): Promise<boolean> => {
    state.iterator ??= await iteratorFor(id);
    if (!state.iterator) {
      state.done = true;
      return false;
    }
    let page;
    try {
      page = await streams.send(new GetRecordsCommand({ ShardIterator: state.iterator, Limit: batchSize }));
    } catch (error) {
      if (!(error instanceof ExpiredIteratorException)) throw error;
      state.iterator = undefined;
      return false;
    }
    const records = (page.Records ?? []).map((r) => toLambdaRecord(r, streamArn, region));
    if (records.length > 0) {
      // The reader sees only what its filters pass; the rest is skipped (and checkpointed) as Lambda does.
      const passed = records.filter((r) => consumersOf(r).length > 0);
      if (passed.length > 0 && !(await handleBatch(passed))) return false;
      checkpoint.shards[id] = records.at(-1)?.dynamodb?.SequenceNumber as string;
      writeCheckpoint(options.dataDir, checkpointName, checkpoint);
    }
    state.iterator = page.NextShardIterator;
    // No next iterator: the shard is closed and read to its end.
    if (!state.iterator) state.done = true;
    return records.length > 0;
  };

  const loop = async () => {
    let describedAt = 0;
    while (!stopped()) {
      let busy = false;
      try {
        if (Date.now() - describedAt >= describeEveryMs) {
          await describe();
          describedAt = Date.now();
        }
        for (const [id, state] of shards) {
          if (stopped()) break;
          if (ready(state) && (await pollShard(id, state))) busy = true;
        }
      } catch (error) {
        if (stopped()) break;
        log.error('stream poll failed', error, { streamArn });
        await pause(1000);
      }
      if (!busy) await pause(pollMs);
    }
  };

  const running = loop();
  log.info('stream poller started', { function: fn, streamArn, shardsCheckpointed: Object.keys(checkpoint.shards).length });
  return {
    streamArn,
    stop: async () => {
      stopping.abort();
      await running;
      streams.destroy();
    },
  };
};
