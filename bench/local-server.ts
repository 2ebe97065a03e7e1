/**
 * The local server (the deployed handlers) on a fresh in-memory DynamoDB Local and table of its
 * own, for the timing scripts (bench/signin-timing.ts, bench/address-timing.ts): `post` times one
 * JSON request end to end. `env` is set before the server's modules load (lib/core/config.ts reads
 * it once); unset entries only.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureTable, startDynamoDbLocal } from '#infra/dynamodb-local.ts';

export const startBenchServer = async (env: Record<string, string>) => {
  for (const [name, value] of Object.entries(env)) process.env[name] ??= value;
  const dynamo = await startDynamoDbLocal();
  process.env.DYNAMODB_ENDPOINT = dynamo.endpoint;
  process.env.TABLE_NAME = `bench-${randomUUID()}`;
  process.env.DATA_DIR = mkdtempSync(join(tmpdir(), 'roster-bench-'));
  await ensureTable(dynamo.endpoint, process.env.TABLE_NAME);
  const { startLocalServer } = await import('#lib/http/server.ts');
  const server = await startLocalServer(0);
  return {
    url: server.url,
    /** POST `body` as JSON: the status, the body's text and the milliseconds it took. */
    post: async (path: string, body: unknown) => {
      const started = performance.now();
      const res = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      return { ms: performance.now() - started, status: res.status, text };
    },
    close: async () => {
      await server.close();
      dynamo.stop();
    },
  };
};
