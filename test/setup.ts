import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, inject } from 'vitest';
import { ensureTable, localClient, startDynamoDbLocal } from '../infra/dynamodb-local.ts';

/**
 * Every test file: its own table on the shared DynamoDB Local and its own data directory (signing
 * key), set before any handler module loads and reads them. Only loopback endpoints are allowed.
 * The table goes when the file ends (after the file's own hooks): the in-memory emulator would
 * otherwise keep every finished file's items and stream records, and slow the files after it.
 * The load files (vitest.config.ts, TEST_OWN_DYNAMODB) each start an emulator of their own: after
 * the other files have run, the shared one served them 4 to 30 times slower (the 20,000-member
 * cleanup: over 25 minutes, against 46 s on a fresh one), and they timed out.
 */
const own = process.env.TEST_OWN_DYNAMODB === '1' ? await startDynamoDbLocal() : undefined;
const endpoint = own?.endpoint ?? inject('dynamodbEndpoint');
if (!/^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?$/.test(endpoint)) {
  throw new Error(`tests run against DynamoDB Local only, not ${endpoint}`);
}
process.env.DYNAMODB_ENDPOINT = endpoint;
// Every suite signs up many users from 127.0.0.1; the per-address limits are tested on their own
// (test/api/limits.test.ts sets its own values).
process.env.RATE_LIMIT_IP_BURST ??= '100000';
// One DynamoDB Local serves every test file at once on two cores: give it the patience a
// loaded emulator needs (the defaults are for DynamoDB itself).
process.env.DYNAMODB_CONNECT_TIMEOUT_MS ??= '10000';
process.env.DYNAMODB_REQUEST_TIMEOUT_MS ??= '20000';
// Hundreds of concurrent requests share this one process (on Lambda each would have an instance).
process.env.LOCAL_FUNCTION_TIMEOUT_SECONDS ??= '60';
process.env.RATE_LIMIT_IP_REFILL ??= '100000';
process.env.RATE_LIMIT_SIGNUP_BURST ??= '100000';
process.env.RATE_LIMIT_SIGNUP_REFILL ??= '100000';
// Owners in the permission matrices send hundreds of invitations; the allowance is tested on its
// own (test/api/verified-invites.test.ts sets its own value).
process.env.INVITE_MAILS_PER_USER_HOUR ??= '100000';
process.env.TABLE_NAME = `test-${randomUUID()}`;
process.env.DATA_DIR = mkdtempSync(join(tmpdir(), 'roster-test-'));
await ensureTable(endpoint, process.env.TABLE_NAME);
afterAll(async () => {
  const admin = localClient(endpoint);
  try {
    await admin.send(new DeleteTableCommand({ TableName: process.env.TABLE_NAME }));
  } finally {
    admin.destroy();
    own?.stop();
  }
});
