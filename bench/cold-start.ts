import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { chmodTree } from '#infra/compile-cache.ts';
import { compileCacheEnv } from '#infra/endpoint.ts';
import { db } from '#lib/db/service.ts';
import { ROUTES, type Route } from '#lib/http/routes.ts';
import { SignJWT } from 'jose';
import { BASELINE_SECRET, BASELINE_TEAM, baselineTeam } from './baseline-handler.ts';
import { type Bundle, bundle, bundleBaseline, bundleFloor, functionEntry, functionNames } from './bundles.ts';
import { marshal } from './bulk-write.ts';
import type { PartContext } from './context.ts';
import { isRead, toEvent } from './invoke.ts';
import { scenarios } from './scenarios.ts';
import { type Summary, summarize } from './stats.ts';

/** Fresh processes per function: each one a cold start (COLD_RUNS=3 for a quick look; the report's figures are of 15). */
const RUNS = Number(process.env.COLD_RUNS ?? 15);
/** COLD_ONLY=teams-get,invites-create: only these functions (and the baseline and the floor), for a quick look. */
const ONLY = process.env.COLD_ONLY?.split(',').filter(Boolean);
/**
 * COLD_CACHE: `off` (as deployed by default: Node compiles the bundle), `on` (as with
 * `-c compileCache=true`: Node reads the compile cache shipped with each bundle), or `both`: each
 * function twice, the second as `<name> (no cache)`, the two interleaved in every round so that
 * both see the same moments of a busy machine.
 */
const CACHE_MODES = ['off', 'on', 'both'] as const;
const CACHE = (process.env.COLD_CACHE ?? 'off') as (typeof CACHE_MODES)[number];
if (!CACHE_MODES.includes(CACHE)) throw new Error(`COLD_CACHE must be one of ${CACHE_MODES.join(', ')}`);
/** Cold runs of a function per round, each with an event of its own (a write cannot be repeated). */
const PER_ROUND = CACHE === 'both' ? 2 : 1;
const EVENTS = RUNS * PER_ROUND;
/** None, as on the stack's functions by default: no source map ships (infra/endpoint.ts, `-c sourceMaps`). */
const NODE_OPTIONS = '';
/** COLD_PROFILE=<dir>: each run also writes a V8 CPU profile there (`<function>.<round>.cpuprofile`), to see what a first call pays; its times then include the profiler's cost. */
const PROFILE_DIR = process.env.COLD_PROFILE;
const RUNNER = fileURLToPath(new URL('./cold-runner.mjs', import.meta.url));
const run = promisify(execFile);

/** `background`: the mailer, invoked with a stream batch; no cold target, as for the other background functions. */
type Kind = 'read' | 'write' | 'background' | 'import only' | 'floor' | 'baseline';

export interface ColdRow {
  name: string;
  kind: Kind;
  bytes: number;
  gzipBytes: number;
  /** The ten largest contributors to the minified bundle. */
  packages: Bundle['packages'];
  importMs: Summary;
  invokeMs: Summary | null;
  totalMs: Summary | null;
  /** Answers of the first invocations, with how often each came. */
  statuses: Record<string, number>;
  /** Hashes a password on purpose (bench/scenarios.ts `hashes`): no cold target. */
  hashes: boolean;
  expected: string;
}

export interface ColdResult {
  runs: number;
  nodeOptions: string;
  /** Whether the runs read the compile cache shipped with each bundle (`both`: rows with and without). */
  compileCache: typeof CACHE;
  /** The baseline's import + first call, p50, from the same rounds: what each function's ratio is to. */
  baselineMs: number | null;
  rows: ColdRow[];
}

interface Target {
  name: string;
  /** Whether Node reads the bundle's compile cache. */
  cache?: boolean;
  kind: Kind;
  /** One event per run (none: import only). */
  events: unknown[] | null;
  expected: string;
  hashes?: boolean;
}

/**
 * The mailer's events: a stream batch of one new outbox message each, as the table's stream hands
 * them over (NEW_IMAGE), for an invitation of the steady state; sent with the log transport.
 */
const mailerEvents = async (ctx: PartContext, inviteUuids: string[]): Promise<DynamoDBStreamEvent[]> => {
  const items = inviteUuids.map((inviteUuid) => {
    const now = new Date().toISOString();
    const message = { messageId: randomUUID(), kind: 'invitation' as const, inviteUuid, status: 'PENDING' as const, createdAt: now };
    return (db().entities.outboxMessage.put(message).params() as { Item: Record<string, unknown> }).Item;
  });
  await ctx.writer.write(items);
  return items.map((item, i) => ({
    Records: [
      {
        eventID: randomUUID(),
        eventName: 'INSERT',
        eventSource: 'aws:dynamodb',
        awsRegion: 'us-east-1',
        dynamodb: {
          Keys: marshal({ pk: item.pk, sk: item.sk }),
          NewImage: marshal(item),
          SequenceNumber: String(1000 + i),
          StreamViewType: 'NEW_IMAGE',
        },
      },
    ],
  })) as DynamoDBStreamEvent[];
};

/** The baseline's team in the table and its events: a GET of that team with a valid HS256 token. */
const baselineTarget = async (ctx: PartContext): Promise<Target> => {
  await ctx.writer.write([(baselineTeam.put(BASELINE_TEAM).params() as { Item: Record<string, unknown> }).Item]);
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('bench')
    .setIssuedAt()
    .setExpirationTime('2h')
    .sign(new TextEncoder().encode(BASELINE_SECRET));
  const { event } = toEvent({ method: 'GET', path: `/api/teams/${BASELINE_TEAM.slug}`, token });
  return { name: 'baseline', kind: 'baseline', events: Array.from({ length: EVENTS }, () => event), expected: '200' };
};

/** Every function in functions/ with the events of its cold runs: realistic, successful calls. */
const targets = async (ctx: PartContext): Promise<Target[]> => {
  // The large team: 8 members for role changes, RUNS to remove, and some to spare.
  const state = await ctx.steadyState(EVENTS + 25);
  const byName = new Map<string, Target>();
  for (const scenario of scenarios(state, ctx.writer)) {
    if (byName.has(scenario.name)) continue; // the first (smallest) variant of a function
    const request = await scenario.prepare(EVENTS);
    const events = Array.from({ length: EVENTS }, (_, i) => {
      const req = request(i);
      if (!req) throw new Error(`${scenario.label}: pool used up`);
      const { name, event } = toEvent(req);
      if (name !== scenario.name) throw new Error(`${scenario.label} is served by ${name}, not ${scenario.name}`);
      return { method: req.method, event };
    });
    const first = request(0);
    const kind = first && isRead(first) ? 'read' : 'write';
    const expected = String(scenario.status);
    byName.set(scenario.name, {
      name: scenario.name,
      kind,
      events: events.map((e) => e.event),
      expected,
      hashes: scenario.hashes === true,
    });
  }
  const invites = state.alphaInvites.slice(0, EVENTS).map((i) => i.uuid);
  byName.set('mailer', { name: 'mailer', kind: 'background', events: await mailerEvents(ctx, invites), expected: '0 failed' });
  // Rotation steps talk to Secrets Manager, which has no local stand-in here.
  byName.set('keys-rotate', { name: 'keys-rotate', kind: 'import only', events: null, expected: 'not invoked' });

  // A function added since the scenarios were written: its import is still measured.
  for (const name of new Set([...functionNames(), ...ROUTES.map((r) => r.name)])) {
    if (!byName.has(name)) byName.set(name, { name, kind: 'import only', events: null, expected: 'not invoked (no scenario)' });
  }
  return [...byName.values()].filter((t) => !ONLY || ONLY.includes(t.name)).sort((a, b) => a.name.localeCompare(b.name));
};

interface Sample {
  importMs: number;
  invokeMs: number | null;
  status: string;
}

/** The variables a cold run gets: the function's code dir as its task root, and the compile cache's or none. */
const runEnv = (taskRoot: string, cache: boolean): NodeJS.ProcessEnv => {
  const cacheVariables = compileCacheEnv(taskRoot);
  const inherited = Object.entries(process.env).filter(([name]) => !(name in cacheVariables));
  // LAMBDA_TASK_ROOT: where a function finds the files shipped beside it (lib/core/shipped.ts). The
  // region and credentials as Lambda sets them, which the baseline's SDK client reads.
  return {
    ...Object.fromEntries(inherited),
    NODE_OPTIONS,
    LAMBDA_TASK_ROOT: taskRoot,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'bench',
    AWS_SECRET_ACCESS_KEY: 'bench',
    AWS_SESSION_TOKEN: 'bench',
    ...(cache ? cacheVariables : {}),
  };
};

/** `taskRoot`: a read-only copy of the bundle's directory, as Lambda's /var/task is. */
const coldStart = async (target: Target, taskRoot: string, eventFile: string | undefined, round: number): Promise<Sample> => {
  const profile = PROFILE_DIR
    ? [
        '--cpu-prof',
        '--cpu-prof-interval=100',
        `--cpu-prof-dir=${PROFILE_DIR}`,
        `--cpu-prof-name=${target.name.replace(/\W+/g, '-')}.${round}.cpuprofile`,
      ]
    : [];
  const args = [...profile, RUNNER, join(taskRoot, 'index.mjs'), ...(eventFile ? [eventFile] : [])];
  const { stdout, stderr } = await run(process.execPath, args, {
    env: runEnv(taskRoot, target.cache ?? false),
    maxBuffer: 16 * 1024 * 1024,
  });
  const line = stdout.split('\n').find((l) => l.startsWith('COLD '));
  if (!line) throw new Error(`cold start of ${target.name} printed no result:\n${stdout}${stderr}`);
  const sample = JSON.parse(line.slice(5)) as Sample;
  // The report shows the unexpected answer; the worker log (run.ts prints where) keeps what the function said.
  if (sample.status !== target.expected) console.error(`cold start of ${target.name} answered ${sample.status}:\n${stdout}${stderr}`);
  return sample;
};

const measure = async (ctx: PartContext, list: Target[], baseline: Target, dir: string): Promise<ColdResult> => {
  ctx.progress(`cold start: bundling ${list.length} functions, the baseline and the floor`);
  const shipped = (name: string) => (ROUTES as readonly Route[]).find((r) => r.name === name)?.files ?? [];
  const cache = CACHE !== 'off';
  const bundles = await Promise.all(list.map((t) => bundle(t.name, functionEntry(t.name), dir, shipped(t.name), cache)));
  const floor = await bundleFloor(dir, cache);
  // The floor gets an API event too, which it ignores: measured the same way as the others.
  const built: (Target & { bundle: Bundle })[] = [
    { ...baseline, bundle: await bundleBaseline(dir) },
    ...list.map((t, i) => ({ ...t, bundle: bundles[i] as Bundle })),
    {
      name: 'floor',
      kind: 'floor',
      events: (list.find((t) => t.name === 'fallback') ?? list[0])?.events ?? null,
      expected: '200',
      bundle: floor,
    },
  ];
  // `variant`: which of a round's events the run takes.
  // The baseline ships no compile cache: it runs once a round, without.
  const all = built.flatMap((t) => {
    const plain = t.kind === 'baseline';
    return [
      ...(CACHE === 'off' || plain ? [] : [{ ...t, cache: true, variant: 0 }]),
      ...(CACHE === 'on' && !plain
        ? []
        : [{ ...t, cache: false, variant: PER_ROUND - 1, name: CACHE === 'both' && !plain ? `${t.name} (no cache)` : t.name }]),
    ];
  });
  // Each function's code copied read-only, as Lambda's task root is: Node must read the cache there
  // without writing (root may write anyway: Node then adds the runner's own entry, compiled before the timed import).
  const roots = new Map(built.map((t) => [t.bundle.dir, join(dir, 'task-roots', t.bundle.name)]));
  mkdirSync(join(dir, 'task-roots'));
  for (const [from, to] of roots) {
    cpSync(from, to, { recursive: true });
    chmodTree(to, 0o555, 0o444);
  }

  const samples = new Map<string, Sample[]>(all.map((t) => [t.name, []]));
  // Round-robin over the functions: a noisy moment of the machine spreads over all of them.
  for (let r = 0; r < RUNS; r++) {
    ctx.progress(`cold start: round ${r + 1}/${RUNS}`);
    for (const t of all) {
      let eventFile: string | undefined;
      if (t.events) {
        eventFile = join(dir, `${t.name}.${r}.json`);
        writeFileSync(eventFile, JSON.stringify(t.events[r * PER_ROUND + t.variant]));
      }
      samples.get(t.name)?.push(await coldStart(t, roots.get(t.bundle.dir) as string, eventFile, r));
    }
  }

  const rows = all.map((t): ColdRow => {
    const got = samples.get(t.name) ?? [];
    const invoked = got.filter((s) => s.invokeMs !== null);
    const statuses: Record<string, number> = {};
    for (const s of got) statuses[s.status] = (statuses[s.status] ?? 0) + 1;
    return {
      name: t.name,
      kind: t.kind,
      bytes: t.bundle.bytes,
      gzipBytes: t.bundle.gzipBytes,
      packages: t.bundle.packages.slice(0, 10),
      importMs: summarize(got.map((s) => s.importMs)),
      invokeMs: invoked.length ? summarize(invoked.map((s) => s.invokeMs as number)) : null,
      totalMs: invoked.length ? summarize(invoked.map((s) => s.importMs + (s.invokeMs as number))) : null,
      statuses,
      expected: t.expected,
      hashes: t.hashes === true,
    };
  });
  const baselineMs = rows.find((r) => r.kind === 'baseline')?.totalMs?.p50 ?? null;
  return { runs: RUNS, nodeOptions: NODE_OPTIONS, compileCache: CACHE, baselineMs, rows };
};

export const runColdStart = async (ctx: PartContext): Promise<ColdResult> => {
  ctx.progress('cold start: seeding and preparing events');
  const list = await targets(ctx);
  const baseline = await baselineTarget(ctx);
  const dir = mkdtempSync(join(tmpdir(), 'roster-bench-cold-'));
  try {
    return await measure(ctx, list, baseline, dir);
  } finally {
    // The read-only copies first made writable again: without it a user other than root could not remove them.
    chmodTree(dir, 0o755, 0o644);
    rmSync(dir, { recursive: true, force: true });
  }
};
