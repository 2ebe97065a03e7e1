import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
// The server under test is the repository's own, and so is its way of finding a free port.
import { freePort } from '../../../infra/dynamodb-local.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    baseUrl: string;
    /** The server's output: the log mail transport writes each message's links there (test/helpers.ts reads them). */
    serverLog: string;
  }
}

/** The repository this client lives in (`<repo>/clients/typescript`), wherever it is cloned. */
const repo = fileURLToPath(new URL('../../../', import.meta.url));

const exited = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));

/** Polls GET /healthz until it answers 200; fails early if the server exits. */
const healthy = async (url: string, server: ChildProcess, log: string): Promise<void> => {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) break;
    const ok = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await sleep(200);
  }
  throw new Error(`the Roster server at ${url} did not become healthy:\n${readFileSync(log, 'utf8')}`);
};

/**
 * Starts the real local server (`npm start` in the repository: DynamoDB Local, the table, the API)
 * on a free port with fresh data, and stops it after the run.
 */
export default async function setup(project: TestProject) {
  const dataDir = mkdtempSync(join(tmpdir(), 'roster-client-test-'));
  const log = join(dataDir, 'server.log');
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    DATA_DIR: dataDir,
    // Nothing is sent: each message becomes a log line with its links, which is how the tests get
    // the links of verification, reset and e-mail change messages from another process.
    MAIL_TRANSPORT: 'log',
    // Short enough that test/session.test.ts sees a token near its expiry within seconds.
    ACCESS_TOKEN_TTL_SECONDS: '65',
    // Every test signs up and in from 127.0.0.1: lift the per-address limits, as the server's own tests do.
    RATE_LIMIT_IP_BURST: '100000',
    RATE_LIMIT_IP_REFILL: '100000',
    // The tests resend, re-invite and nominate within seconds: lift what one address may be sent,
    // as the server's own tests do (its test/api/recipient-allowances.test.ts tests those limits).
    RECIPIENT_MAIL_GAP_SECONDS: '0',
    UNSOLICITED_MAILS_PER_ADDRESS_HOUR: '100000',
    UNSOLICITED_MAILS_PER_ADDRESS_DAY: '100000',
  };
  // Always a DynamoDB Local of our own, never one named by the caller's environment.
  delete env.DYNAMODB_ENDPOINT;
  delete env.TABLE_NAME;
  // Webhooks to 127.0.0.1 only, as locally (WEBHOOKS_ALLOW_PRIVATE_URLS): the tests' deliveries
  // never leave this machine. Private and other reserved addresses stay refused.
  env.WEBHOOKS_ALLOW_PRIVATE_URLS = 'true';
  const output = openSync(log, 'a');
  const server = spawn(join(repo, 'node_modules/.bin/node'), [join(repo, 'infra/local.ts')], {
    cwd: dataDir,
    env,
    stdio: ['ignore', output, output],
  });
  const stop = async () => {
    // SIGTERM lets the server stop its DynamoDB Local too; SIGKILL only if it hangs.
    server.kill('SIGTERM');
    const killer = setTimeout(() => server.kill('SIGKILL'), 10_000);
    await exited(server);
    clearTimeout(killer);
    rmSync(dataDir, { recursive: true, force: true });
  };
  const url = `http://127.0.0.1:${port}`;
  try {
    await healthy(url, server, log);
  } catch (error) {
    await stop();
    throw error;
  }
  project.provide('baseUrl', url);
  project.provide('serverLog', log);
  return stop;
}
