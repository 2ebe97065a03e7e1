import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The unit and infra tiers: no DynamoDB. The client points at the discard port of loopback, where
 * nothing listens, so a test that reaches for the database fails at once (it belongs in test/api/).
 */
process.env.DYNAMODB_ENDPOINT = 'http://127.0.0.1:9';
process.env.DYNAMODB_CONNECT_TIMEOUT_MS = '200';
process.env.TABLE_NAME = 'no-table-in-unit-tests';
process.env.DATA_DIR = mkdtempSync(join(tmpdir(), 'roster-unit-'));
