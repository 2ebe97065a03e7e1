/**
 * Sign-in with an unknown e-mail vs a wrong password: same answer, and how close in time?
 * Runs the local server on a fresh in-memory DynamoDB Local, warms up, then interleaves
 * `ROUNDS` sign-ins of each kind and prints the medians and p90s.  `npm run bench:signin`
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureTable, startDynamoDbLocal } from '#infra/dynamodb-local.ts';

const ROUNDS = Number(process.env.ROUNDS ?? 200);
// Measure the password path, not the limiter's 429s: limits far above what the run sends.
for (const name of ['RATE_LIMIT_IP_BURST', 'RATE_LIMIT_IP_REFILL', 'RATE_LIMIT_ACCOUNT_FAILURES', 'RATE_LIMIT_ACCOUNT_HOURLY_FAILURES']) {
  process.env[name] ??= '5000';
}
const dynamo = await startDynamoDbLocal();
process.env.DYNAMODB_ENDPOINT = dynamo.endpoint;
process.env.TABLE_NAME = `bench-${randomUUID()}`;
process.env.DATA_DIR = mkdtempSync(join(tmpdir(), 'roster-bench-'));
await ensureTable(dynamo.endpoint, process.env.TABLE_NAME);
const { startLocalServer } = await import('#lib/http/server.ts');
const server = await startLocalServer(0);

const post = async (path: string, body: unknown) => {
  const started = performance.now();
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { ms: performance.now() - started, status: res.status, text };
};

try {
  const email = 'known@example.com';
  await post('/api/auth/signup', { email, password: 'the right password', firstName: 'K', lastName: 'N' });
  const wrong = { email, password: 'a wrong password' };
  const unknown = () => ({ email: `nobody-${randomUUID()}@example.com`, password: 'a wrong password' });
  for (let i = 0; i < 20; i++) await Promise.all([post('/api/auth/signin', wrong), post('/api/auth/signin', unknown())]);

  const times = { wrong: [] as number[], unknown: [] as number[] };
  const bodies = new Set<string>();
  for (let i = 0; i < ROUNDS; i++) {
    const a = await post('/api/auth/signin', wrong);
    const b = await post('/api/auth/signin', unknown());
    times.wrong.push(a.ms);
    times.unknown.push(b.ms);
    bodies.add(`${a.status} ${a.text}`).add(`${b.status} ${b.text}`);
  }
  const pct = (xs: number[], p: number) => [...xs].sort((x, y) => x - y)[Math.floor((xs.length - 1) * p)] as number;
  const row = (name: keyof typeof times) =>
    `${name.padEnd(8)} p50 ${pct(times[name], 0.5).toFixed(1)} ms  p90 ${pct(times[name], 0.9).toFixed(1)} ms`;
  console.log(`sign-in, ${ROUNDS} rounds each, interleaved, on ${process.version}`);
  console.log(row('wrong'));
  console.log(row('unknown'));
  console.log(`median difference ${(pct(times.unknown, 0.5) - pct(times.wrong, 0.5)).toFixed(1)} ms; distinct answers: ${bodies.size}`);
} finally {
  await server.close();
  dynamo.stop();
}
