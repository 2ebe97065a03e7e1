/**
 * `npm start`: DynamoDB Local (unless DYNAMODB_ENDPOINT points at a running one), the table, and
 * the API on PORT through the same handlers the stack deploys. Ctrl-C stops everything.
 */
import { join, resolve } from 'node:path';
import { type DynamoDbLocal, ensureTable, startDynamoDbLocal } from './dynamodb-local.ts';

const port = Number(process.env.PORT ?? 3000);
const dataDir = resolve(process.env.DATA_DIR ?? '.data');
const tableName = process.env.TABLE_NAME ?? 'roster';
process.env.DATA_DIR = dataDir;
process.env.TABLE_NAME = tableName;

let dynamo: DynamoDbLocal | undefined;
if (!process.env.DYNAMODB_ENDPOINT) {
  console.log(`Starting DynamoDB Local (data in ${join(dataDir, 'dynamodb')})…`);
  dynamo = await startDynamoDbLocal(join(dataDir, 'dynamodb'));
  process.env.DYNAMODB_ENDPOINT = dynamo.endpoint;
  // However this process ends from here on (even a failed start), it does not leave DynamoDB Local running.
  process.on('exit', () => dynamo?.stop());
}
const endpoint = process.env.DYNAMODB_ENDPOINT;
await ensureTable(endpoint, tableName);

// Imported only now: the handlers read DYNAMODB_ENDPOINT and TABLE_NAME when they load.
const { startLocalServer } = await import('#lib/http/server.ts');
const server = await startLocalServer(port, process.env.HOST ?? '127.0.0.1').catch((error: NodeJS.ErrnoException) => {
  if (error.code !== 'EADDRINUSE') throw error;
  console.error(`Port ${port} is in use; start with another one, e.g. PORT=3001 npm start`);
  process.exit(1);
});
console.log(`Roster API on ${server.url} (table ${tableName} at ${endpoint}); Ctrl-C stops it.`);
// The stream's one reader and the queues it feeds (the mailer, the team cleanup and the webhook
// fan-out), and the webhook queue with its delivery function, as Lambda would run them.
const { startLocalBackground } = await import('./local-background.ts');
const background = await startLocalBackground({ endpoint, tableName, dataDir });

// The invite, outbox, cleanup-job and webhook sweepers, as their schedules would run them (infra/schedules.ts).
const { startSchedules } = await import('./schedules.ts');
const schedules = startSchedules();

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await Promise.all(schedules.map((s) => s.stop()));
  // The server first: a replay it is still answering sends to the webhook queue.
  await server.close();
  await background.stop();
  dynamo?.stop();
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
process.on('SIGHUP', () => void stop());
