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
import { startBenchServer } from './local-server.ts';
import { summarize } from './stats.ts';

const ROUNDS = Number(process.env.ROUNDS ?? 60);
// The source network's buckets, far above what the run sends: the run measures the routes, not 429s.
const { post, close } = await startBenchServer({ RATE_LIMIT_SIGNUP_BURST: '100000', RATE_LIMIT_SIGNUP_REFILL: '100000' });
const { db } = await import('#lib/db/service.ts');

/** Each route with the body it takes for an address. */
const ROUTES: Record<string, (email: string) => [string, unknown]> = {
  'POST /api/auth/recover': (email) => ['/api/auth/recover', { email }],
  'POST /auth/v1/recover': (email) => ['/auth/v1/recover', { email }],
  'POST /auth/v1/resend': (email) => ['/auth/v1/resend', { type: 'signup', email }],
};

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
    const [k, u] = [summarize(known.map((a) => a.ms)), summarize(unknown.map((a) => a.ms))];
    const gap = Math.abs(k.p50 - u.p50) / Math.min(k.p50, u.p50);
    worst = Math.max(worst, gap);
    console.log(`\n${name}`);
    console.log(`  registered  ${statuses(known)}; p50 ${k.p50.toFixed(1)} ms, p90 ${k.p90.toFixed(1)} ms`);
    console.log(`  never seen  ${statuses(unknown)}; p50 ${u.p50.toFixed(1)} ms, p90 ${u.p90.toFixed(1)} ms`);
    console.log(
      `  outbox messages written: ${await written(mine)} and ${await written(unknownAddresses)}; medians ${(gap * 100).toFixed(1)}% apart`,
    );
  }
  console.log(`\nlargest gap between medians: ${(worst * 100).toFixed(1)}% (${worst <= 0.1 ? 'within' : 'NOT within'} 10%)`);
} finally {
  await close();
}
