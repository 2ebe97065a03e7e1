import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ESBUILD } from '#infra/endpoint.ts';
import { LOGGER_MIDDLEWARE, createDocumentClient } from '#lib/db/client.ts';

const clientModule = fileURLToPath(new URL('../../lib/db/client.ts', import.meta.url));

/**
 * In a fresh process (the SDK caches what it read), with every file read recorded: the client's
 * first request, then the same request from a client with only the SDK's defaults, the control
 * that the recording sees the SDK's reads.
 */
const script = `
  import fs from 'node:fs';
  import { syncBuiltinESMExports } from 'node:module';
  const reads = [];
  for (const [owner, name] of [[fs, 'readFileSync'], [fs, 'readFile'], [fs.promises, 'readFile']]) {
    const original = owner[name];
    owner[name] = function (path, ...rest) { reads.push(String(path)); return original.call(this, path, ...rest); };
  }
  syncBuiltinESMExports();
  const { createDocumentClient } = await import(${JSON.stringify(clientModule)});
  const { GetCommand } = await import('@aws-sdk/lib-dynamodb');
  const { DynamoDBClient, GetItemCommand } = await import('@aws-sdk/client-dynamodb');
  const key = { pk: 'none', sk: 'none' };
  await createDocumentClient().send(new GetCommand({ TableName: process.env.TABLE_NAME, Key: key }));
  const request = reads.filter((path) => path.includes('.aws'));
  const plain = new DynamoDBClient({ region: 'us-east-1', endpoint: process.env.DYNAMODB_ENDPOINT, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  await plain.send(new GetItemCommand({ TableName: process.env.TABLE_NAME, Key: { pk: { S: key.pk }, sk: { S: key.sk } } }));
  const control = reads.filter((path) => path.includes('.aws')).length - request.length;
  console.log(JSON.stringify({ request, control }));
`;

describe('DynamoDB client settings', () => {
  it("drops the SDK's logger middleware, which redacts every input and output for a logger Roster never gives it", () => {
    const plain = new DynamoDBClient({ region: 'us-east-1' });
    // Named as the SDK names it: a rename there fails here instead of silently keeping the cost.
    expect(plain.middlewareStack.identify()).toContainEqual(expect.stringMatching(new RegExp(`^${LOGGER_MIDDLEWARE} `)));
    const ours = createDocumentClient('http://127.0.0.1:9');
    expect(ours.middlewareStack.identify().filter((name) => name.startsWith(LOGGER_MIDDLEWARE))).toEqual([]);
    expect(ours.middlewareStack.identify()).toContainEqual(expect.stringMatching(/^countForRequest /));
  });

  it('the first request reads no shared config or credentials file', () => {
    const home = mkdtempSync(join(tmpdir(), 'roster-home-'));
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, HOME: home, USERPROFILE: home },
    });
    expect(run.status, run.stderr).toBe(0);
    const { request, control } = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}') as { request: string[]; control: number };
    expect(request).toEqual([]);
    expect(control).toBeGreaterThan(0);
  });
});

describe('DynamoDB packages in the bundles (infra/sdk-subsets/)', () => {
  it('a function bundle holds the commands used, not every command of the SDK', async () => {
    const result = await build({ ...ESBUILD, entryPoints: ['functions/teams-get.ts'], write: false, metafile: true, logLevel: 'silent' });
    const inputs = Object.keys(result.metafile.inputs);
    const commands = (dir: string) =>
      inputs.filter((input) => input.includes(`/${dir}/dist-es/commands/`)).map((input) => input.split('/').at(-1));
    // The ten item commands ElectroDB and lib/ send, and the one the client itself holds for endpoint discovery.
    const items = [
      'BatchGetItem',
      'BatchWriteItem',
      'DeleteItem',
      'GetItem',
      'PutItem',
      'Query',
      'Scan',
      'TransactGetItems',
      'TransactWriteItems',
      'UpdateItem',
    ];
    expect(commands('client-dynamodb').sort()).toEqual([...items, 'DescribeEndpoints'].map((name) => `${name}Command.js`).sort());
    expect(commands('lib-dynamodb')).not.toContain('index.js');
    expect(inputs.filter((input) => input.endsWith('lib-dynamodb/dist-es/DynamoDBDocument.js'))).toEqual([]);
  });
});
