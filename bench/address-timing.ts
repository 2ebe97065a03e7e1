/**
 * The routes that take an e-mail address without a session, asked about addresses that have an
 * account and addresses that do not: the answers, the items written and the times must not tell
 * them apart (issue 23; docs/accounts.md "What a request tells about an account"). Runs the local
 * server on a fresh in-memory DynamoDB Local, signs up `ROUNDS` accounts (each address then has
 * its sign-up's confirmation message, as a fresh account has), warms up, then per route
 * interleaves one request for a registered address and one for a never-seen address, `ROUNDS`
 * times, and prints the statuses, the outbox messages each side wrote, the medians and p90s, and
 * whether the medians are within 10% of each other.  `npm run bench:address` (ROUNDS=60 by default)
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureTable, startDynamoDbLocal } from '#infra/dynamodb-local.ts';

const ROUNDS = Number(process.env.ROUNDS ?? 60);
// The source network's buckets, far above what the run sends: the run measures the routes, not 429s.
for (const name of ['RATE_LIMIT_SIGNUP_BURST', 'RATE_LIMIT_SIGNUP_REFILL']) process.env[name] ??= '100000';
const dynamo = await startDynamoDbLocal();
process.env.DYNAMODB_ENDPOINT = dynamo.endpoint;
process.env.TABLE_NAME = `bench-${randomUUID()}`;
process.env.DATA_DIR = mkdtempSync(join(tmpdir(), 'roster-bench-'));
await ensureTable(dynamo.endpoint, process.env.TABLE_NAME);
const { startLocalServer } = await import('#lib/http/server.ts');
const { db } = await import('#lib/db/service.ts');
const server = await startLocalServer(0);

const post = async (path: string, body: unknown) => {
  const started = performance.now();
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await res.text();
  return { ms: performance.now() - started, status: res.status };
};

/** Each route with the body it takes for an address. */
const ROUTES: Record<string, (email: string) => [string, unknown]> = {
  'POST /api/auth/recover': (email) => ['/api/auth/recover', { email }],
  'POST /auth/v1/recover': (email) => ['/auth/v1/recover', { email }],
  'POST /auth/v1/resend': (email) => ['/auth/v1/resend', { type: 'signup', email }],
};

const pct = (xs: number[], p: number) => [...xs].sort((x, y) => x - y)[Math.floor((xs.length - 1) * p)] as number;
const statuses = (answers: { status: number }[]) =>
  Object.entries(Object.groupBy(answers, (a) => String(a.status)))
    .map(([status, list]) => `${status} ×${list?.length ?? 0}`)
    .join(', ');
/** The outbox messages written for these addresses (a Scan: this is a benchmark's own table). */
const written = async (addresses: readonly string[]) => {
  const wanted = new Set(addresses);
  const { data } = await db().entities.outboxMessage.scan.go({ pages: 'all' });
  return data.filter((m) => m.address !== undefined && wanted.has(m.address) && m.kind !== 'verification').length;
};

try {
  const password = 'correct horse battery staple';
  const registered: string[] = [];
  const routes = Object.entries(ROUTES);
  // A set of registered addresses for each route, and 20 more for the warm-ups.
  for (let i = 0; i < ROUNDS * routes.length + 20; i++) {
    const email = `known-${i}-${randomUUID().slice(0, 8)}@example.com`;
    await post('/api/auth/signup', { email, password, firstName: 'K', lastName: 'N' });
    registered.push(email);
  }
  const fresh = () => `nobody-${randomUUID()}@example.com`;
  console.log(`${ROUNDS} rounds per route, a registered and a never-seen address interleaved, on ${process.version}`);
  let worst = 0;
  for (const [r, [name, body]] of routes.entries()) {
    // Warm-up on addresses of their own.
    const warm = registered.slice(ROUNDS * routes.length);
    for (const address of warm) await Promise.all([post(...body(address)), post(...body(fresh()))]);
    const mine = registered.slice(r * ROUNDS, (r + 1) * ROUNDS);
    const known: { ms: number; status: number }[] = [];
    const unknown: { ms: number; status: number }[] = [];
    const unknownAddresses: string[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      known.push(await post(...body(mine[i] as string)));
      const address = fresh();
      unknownAddresses.push(address);
      unknown.push(await post(...body(address)));
    }
    const [k, u] = [
      pct(
        known.map((a) => a.ms),
        0.5,
      ),
      pct(
        unknown.map((a) => a.ms),
        0.5,
      ),
    ];
    const gap = Math.abs(k - u) / Math.min(k, u);
    worst = Math.max(worst, gap);
    console.log(`\n${name}`);
    console.log(
      `  registered  ${statuses(known)}; p50 ${k.toFixed(1)} ms, p90 ${pct(
        known.map((a) => a.ms),
        0.9,
      ).toFixed(1)} ms`,
    );
    console.log(
      `  never seen  ${statuses(unknown)}; p50 ${u.toFixed(1)} ms, p90 ${pct(
        unknown.map((a) => a.ms),
        0.9,
      ).toFixed(1)} ms`,
    );
    console.log(
      `  outbox messages written: ${await written(mine)} and ${await written(unknownAddresses)}; medians ${(gap * 100).toFixed(1)}% apart`,
    );
  }
  console.log(`\nlargest gap between medians: ${(worst * 100).toFixed(1)}% (${worst <= 0.1 ? 'within' : 'NOT within'} 10%)`);
} finally {
  await server.close();
  dynamo.stop();
}
