import { QUEUE_NAMES } from '#lib/events/queues.ts';
import { type LocalQueue, type LocalQueueOptions, startLocalQueues } from './local-queue.ts';
import { type StreamPoller, type StreamPollerOptions, startStreamPoller } from './stream-poller.ts';

/**
 * Local mode's background, in the deployed shape: every queue with its function (infra/local-queue.ts),
 * then the stream's one reader (infra/stream-poller.ts), which sends to the work queues. `npm start`
 * and the tests that need the mail, the cleanups or the webhooks start it.
 */
export interface LocalBackground {
  readonly poller: StreamPoller;
  readonly queues: readonly LocalQueue[];
  /** The queue `name` (for a test that waits until it drains, or reads its dead letters). */
  queue: (name: LocalQueue['name']) => LocalQueue;
  /** The reader first, so nothing is sent to a stopped queue; then the queues, each after its batches under way. */
  stop: () => Promise<void>;
}

type Where = 'endpoint' | 'tableName' | 'dataDir';

/** The emulator, table and data folder default to DYNAMODB_ENDPOINT, TABLE_NAME and DATA_DIR, as `npm start` and the tests set them. */
export type LocalBackgroundOptions = Omit<StreamPollerOptions, Where> &
  Partial<Pick<StreamPollerOptions, Where>> & { queues?: Partial<Record<LocalQueue['name'], LocalQueueOptions>> };

const fromEnv = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`the local background needs ${name}`);
  return value;
};

export const startLocalBackground = async (options: LocalBackgroundOptions = {}): Promise<LocalBackground> => {
  const { queues: queueOptions, ...rest } = options;
  const pollerOptions: StreamPollerOptions = {
    ...rest,
    endpoint: rest.endpoint ?? fromEnv('DYNAMODB_ENDPOINT'),
    tableName: rest.tableName ?? fromEnv('TABLE_NAME'),
    dataDir: rest.dataDir ?? fromEnv('DATA_DIR'),
  };
  // Each queue keeps its dead letters beside the stream's, for `npm run replay -- --local`.
  const queues = startLocalQueues(
    Object.fromEntries(QUEUE_NAMES.map((name) => [name, { dataDir: pollerOptions.dataDir, ...queueOptions?.[name] }])),
  );
  const poller = await startStreamPoller(pollerOptions).catch(async (error: unknown) => {
    await Promise.all(queues.map((q) => q.stop()));
    throw error;
  });
  return {
    poller,
    queues,
    queue: (name) => queues.find((q) => q.name === name) as LocalQueue,
    stop: async () => {
      await poller.stop();
      await Promise.all(queues.map((q) => q.stop()));
    },
  };
};
