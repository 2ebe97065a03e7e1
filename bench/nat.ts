/**
 * The NAT benchmark: many people behind one address (an office, a campus, a carrier's NAT). Users
 * sign in and then refresh, all from 127.0.0.1, a bounded number at a time, with the limits in
 * effect (the defaults when run alone); then 40 wrong passwords for 40 unknown e-mails from the
 * same address show the sign-in bucket still stops guessing. Each request calls its handler in this
 * process (bench/invoke.ts), with the real password hashing.
 *
 * Run alone: `npx node bench/nat.ts [users] [concurrency]` (starts an in-memory DynamoDB Local).
 * From bench/run.ts: `runNat(ctx)`, in a worker WITHOUT the benchmark's raised RATE_LIMIT_*
 * settings (bench/limits-env.ts), or it measures nothing.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { PartContext } from './context.ts';
import type { Summary } from './stats.ts';

export interface NatPhase {
  requests: number;
  /** Answers by status. */
  statuses: Record<string, number>;
  latencyMs: Summary;
  seconds: number;
}

export interface NatResult {
  users: number;
  concurrency: number;
  /** The limits in effect (config is read once per process). */
  limits: { signIn: string; refreshPerSession: string };
  signIn: NatPhase;
  refresh: NatPhase;
  /** 40 wrong passwords for 40 unknown e-mails from the same address, after the sign-ins. */
  guesses: NatPhase;
}

const USERS = 500;
const CONCURRENCY = 8;
const GUESSES = 40;

export const runNat = async (ctx: Pick<PartContext, 'progress'>, users = USERS, concurrency = CONCURRENCY): Promise<NatResult> => {
  // Loaded here, not at the top: the handlers read the environment once, when they load.
  const [{ hashPassword }, { config }, { db }, { newId }, { invokeDirect }, { inParallel, PASSWORD, fresh }, { summarize }] =
    await Promise.all([
      import('#lib/auth/passwords.ts'),
      import('#lib/core/config.ts'),
      import('#lib/db/service.ts'),
      import('#lib/core/ids.ts'),
      import('./invoke.ts'),
      import('./seed.ts'),
      import('./stats.ts'),
    ]);

  ctx.progress(`nat: seeding ${users} users`);
  // One real argon2id hash shared by every seeded user: each sign-in still verifies at full cost.
  const passwordHash = await hashPassword(PASSWORD);
  const now = new Date().toISOString();
  const seeded = Array.from({ length: users }, () => ({ email: `${fresh('nat')}@example.com`, userUuid: crypto.randomUUID() }));
  await db()
    .entities.user.put(
      seeded.map((u) => ({
        ...u,
        userId: newId(new Date()),
        firstName: 'Nat',
        lastName: 'Bench',
        passwordHash,
        createdAt: now,
        updatedAt: now,
      })),
    )
    .go();
  await db().entities.emailClaim.put(seeded).go();

  const phase = async (label: string, count: number, width: number, request: (i: number) => Parameters<typeof invokeDirect>[0]) => {
    ctx.progress(`nat: ${label}`);
    const latencies: number[] = [];
    const statuses: Record<string, number> = {};
    const bodies: unknown[] = new Array(count);
    const started = performance.now();
    await inParallel(count, width, async (i) => {
      const sent = performance.now();
      const reply = await invokeDirect(request(i));
      latencies.push(performance.now() - sent);
      statuses[reply.status] = (statuses[reply.status] ?? 0) + 1;
      bodies[i] = reply.body;
    });
    const result: NatPhase = { requests: count, statuses, latencyMs: summarize(latencies), seconds: (performance.now() - started) / 1000 };
    return { result, bodies };
  };

  const signIn = await phase('sign-ins', users, concurrency, (i) => ({
    method: 'POST',
    path: '/api/auth/signin',
    json: { email: seeded[i]?.email, password: PASSWORD },
  }));
  const refreshTokens = signIn.bodies.map((b) => (b as { data?: { session?: { refresh_token?: string } } }).data?.session?.refresh_token);
  const refreshable = refreshTokens.filter((t): t is string => t !== undefined);
  const refresh = await phase('refreshes', refreshable.length, concurrency, (i) => ({
    method: 'POST',
    path: '/api/auth/refresh',
    json: { refresh_token: refreshable[i] },
  }));
  // One at a time: how many wrong passwords the address gets through, not how fast.
  const guesses = await phase('wrong passwords', GUESSES, 1, () => ({
    method: 'POST',
    path: '/api/auth/signin',
    json: { email: `${fresh('guess')}@example.com`, password: 'not the password at all' },
  }));

  return {
    users,
    concurrency,
    limits: {
      signIn: `${config.ipBurst} at once, ${config.ipRefill} per ${config.ipRefillSeconds} s per address`,
      refreshPerSession: `${config.refreshBurst} at once, ${config.refreshRefill} per ${config.refreshRefillSeconds} s`,
    },
    signIn: signIn.result,
    refresh: refresh.result,
    guesses: guesses.result,
  };
};

const runAlone = async () => {
  const [users = USERS, concurrency = CONCURRENCY] = process.argv.slice(2).map(Number);
  for (const name of Object.keys(process.env)) if (name.startsWith('RATE_LIMIT_')) Reflect.deleteProperty(process.env, name);
  const { ensureTable, startDynamoDbLocal } = await import('#infra/dynamodb-local.ts');
  const local = await startDynamoDbLocal();
  try {
    process.env.DYNAMODB_ENDPOINT = local.endpoint;
    process.env.TABLE_NAME = 'bench-nat';
    process.env.DATA_DIR = mkdtempSync(join(tmpdir(), 'roster-nat-'));
    process.env.MAIL_TRANSPORT = 'log';
    await ensureTable(local.endpoint, process.env.TABLE_NAME);
    const result = await runNat({ progress: (text) => console.error(text) }, users, concurrency);
    console.log(JSON.stringify(result, null, 2));
  } finally {
    local.stop();
  }
  // The SDK's keep-alive sockets would hold the process open.
  process.exit(0);
};

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await runAlone();
