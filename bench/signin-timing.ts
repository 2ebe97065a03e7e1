/**
 * Sign-in with an unknown e-mail vs a wrong password: same answer, and how close in time?
 * Runs the local server on a fresh in-memory DynamoDB Local, warms up, then interleaves
 * `ROUNDS` sign-ins of each kind and prints the medians and p90s.  `npm run bench:signin`
 */
import { randomUUID } from 'node:crypto';
import { startBenchServer } from './local-server.ts';
import { summarize } from './stats.ts';

const ROUNDS = Number(process.env.ROUNDS ?? 200);
// Measure the password path, not the limiter's 429s: limits far above what the run sends.
const { post, close } = await startBenchServer(
  Object.fromEntries(
    ['RATE_LIMIT_IP_BURST', 'RATE_LIMIT_IP_REFILL', 'RATE_LIMIT_ACCOUNT_FAILURES', 'RATE_LIMIT_ACCOUNT_HOURLY_FAILURES'].map((n) => [
      n,
      '5000',
    ]),
  ),
);

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
  const row = (name: keyof typeof times) => {
    const { p50, p90 } = summarize(times[name]);
    return `${name.padEnd(8)} p50 ${p50.toFixed(1)} ms  p90 ${p90.toFixed(1)} ms`;
  };
  console.log(`sign-in, ${ROUNDS} rounds each, interleaved, on ${process.version}`);
  console.log(row('wrong'));
  console.log(row('unknown'));
  console.log(
    `median difference ${(summarize(times.unknown).p50 - summarize(times.wrong).p50).toFixed(1)} ms; distinct answers: ${bodies.size}`,
  );
} finally {
  await close();
}
