import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll } from 'vitest';
import { ensureTable, localClient, startDynamoDbLocal } from '#infra/dynamodb-local.ts';

/**
 * Every api, load and browser test file: a DynamoDB Local of its own (in memory), its own table and
 * data directory (signing key), set before any handler module loads and reads them.
 *
 * Why not one emulator for the run: DynamoDB Local keeps every stream record it was ever given,
 * deleted tables' included, and each write costs more the more it holds (measured: 0.6 ms of its
 * CPU per request when fresh, 15 ms after 20,000 writes, 30 ms after 40,000). Shared by every
 * file, it served the late files 4 to 30 times slower; fresh, it starts in about 2 s.
 * TEST_DYNAMODB_ENDPOINT points every file at one already running instead (loopback only).
 */
const shared = process.env.TEST_DYNAMODB_ENDPOINT;
const own = shared ? undefined : await startDynamoDbLocal(undefined, undefined, { shortLived: true });
// Stopped however the file's process ends: after its hooks, at its exit, or when vitest stops the
// worker with SIGTERM (no exit hook runs then). An emulator left running would hold 300 MB.
if (own) {
  process.once('exit', own.stop);
  process.once('SIGTERM', () => {
    own.stop();
    process.kill(process.pid, 'SIGTERM');
  });
}
const endpoint = shared ?? (own as { endpoint: string }).endpoint;
if (!/^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?$/.test(endpoint)) {
  throw new Error(`tests run against DynamoDB Local only, not ${endpoint}`);
}
process.env.DYNAMODB_ENDPOINT = endpoint;
// Every suite signs up many users from 127.0.0.1; the per-address limits are tested on their own
// (test/load/limits.test.ts sets its own values).
process.env.RATE_LIMIT_IP_BURST ??= '100000';
process.env.RATE_LIMIT_IP_REFILL ??= '100000';
process.env.RATE_LIMIT_SIGNUP_BURST ??= '100000';
process.env.RATE_LIMIT_SIGNUP_REFILL ??= '100000';
// Two files (two processes and their emulators) share two cores: give DynamoDB Local the patience
// a loaded machine needs (the defaults are for DynamoDB itself).
process.env.DYNAMODB_CONNECT_TIMEOUT_MS ??= '10000';
process.env.DYNAMODB_REQUEST_TIMEOUT_MS ??= '20000';
// Hundreds of concurrent requests share this one process (on Lambda each would have an instance).
process.env.LOCAL_FUNCTION_TIMEOUT_SECONDS ??= '60';
// Owners in the permission matrices send hundreds of invitations; the allowance is tested on its
// own (test/api/verified-invites.test.ts sets its own value).
process.env.INVITE_MAILS_PER_USER_HOUR ??= '100000';
// Suites invite, nominate and mail one address many times a minute; what one address may be sent
// is tested on its own (test/api/recipient-allowances.test.ts sets its own values).
process.env.RECIPIENT_MAIL_GAP_SECONDS ??= '0';
process.env.UNSOLICITED_MAILS_PER_ADDRESS_HOUR ??= '100000';
process.env.UNSOLICITED_MAILS_PER_ADDRESS_DAY ??= '100000';
process.env.TABLE_NAME = `test-${randomUUID()}`;
process.env.DATA_DIR = mkdtempSync(join(tmpdir(), 'roster-test-'));
await ensureTable(endpoint, process.env.TABLE_NAME);
afterAll(async () => {
  if (own) return own.stop();
  // On a shared emulator the table goes, or every file's items would slow the files after it.
  const admin = localClient(endpoint);
  try {
    await admin.send(new DeleteTableCommand({ TableName: process.env.TABLE_NAME }));
  } finally {
    admin.destroy();
  }
});
