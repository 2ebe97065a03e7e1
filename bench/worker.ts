/**
 * One benchmark process. run.ts starts it with a DYNAMODB_ENDPOINT, TABLE_NAME and DATA_DIR of
 * its own (the handlers read them once, as they load) and the parts to run in it; each part's
 * result goes back over the IPC channel.
 */
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { localClient } from '#infra/dynamodb-local.ts';
import { createTableInput } from '#lib/db/entities/table.ts';
import { bulkWriter } from './bulk-write.ts';
import { type PartContext, steadyStateOnce } from './context.ts';
import { PART_NAMES, type PartName, type WorkerMessage } from './parts.ts';

const send = (message: WorkerMessage): Promise<void> =>
  new Promise((resolve, reject) => {
    if (!process.send) throw new Error('bench/worker.ts runs under bench/run.ts');
    process.send(message, undefined, undefined, (error: Error | null) => (error ? reject(error) : resolve()));
  });

const endpoint = process.env.DYNAMODB_ENDPOINT;
const table = process.env.TABLE_NAME;
if (!endpoint || !table) throw new Error('bench/worker.ts needs DYNAMODB_ENDPOINT and TABLE_NAME');
// The table of lib/db/entities/table.ts without its stream: nothing here reads the stream (the mailer's
// events are made by cold-start.ts), and DynamoDB Local writes a stream record inside every write,
// slower as they pile up (a million memberships: 3,700 items/s with it, 6,000 without), where
// DynamoDB does it off the request path.
const admin = localClient(endpoint);
await admin.send(new CreateTableCommand({ ...createTableInput(table), StreamSpecification: undefined }));
admin.destroy();
const writer = bulkWriter(endpoint, table);
const ctx: PartContext = {
  writer,
  progress: (text) => void send({ progress: text }),
  steadyState: steadyStateOnce(writer),
};

const parts: Record<PartName, () => Promise<unknown>> = {
  cold: async () => (await import('./cold-start.ts')).runColdStart(ctx),
  capacity: async () => (await import('./capacity.ts')).runCapacity(ctx),
  load: async () => (await import('./load.ts')).runLoad(ctx),
  scale: async () => (await import('./scale.ts')).runScale(ctx),
  hotteam: async () => (await import('./hot-team.ts')).runHotTeam(ctx),
  nat: async () => (await import('./nat.ts')).runNat(ctx),
};

for (const part of process.argv.slice(2)) {
  if (!(PART_NAMES as readonly string[]).includes(part)) throw new Error(`unknown part ${part}`);
  await send({ part: part as PartName, result: await parts[part as PartName]() });
}
writer.close();
// The local server's and the SDK's keep-alive sockets would hold the process open.
process.exit(0);
