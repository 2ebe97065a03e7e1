import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { db } from '../lib/db/service.ts';
import { ROUTES, type Route } from '../lib/http/routes.ts';
import { type Bundle, bundle, bundleFloor, functionEntry, functionNames } from './bundles.ts';
import { marshal } from './bulk-write.ts';
import type { PartContext } from './context.ts';
import { toEvent } from './invoke.ts';
import { scenarios } from './scenarios.ts';
import { type Summary, summarize } from './stats.ts';

/** Fresh processes per function: each one a cold start. */
const RUNS = 15;
/** None, as on the stack's functions: the source map ships but is not loaded (infra/endpoint.ts). */
const NODE_OPTIONS = '';
const RUNNER = fileURLToPath(new URL('./cold-runner.mjs', import.meta.url));
const run = promisify(execFile);

type Kind = 'read' | 'write' | 'import only' | 'floor';

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
  expected: string;
}

export interface ColdResult {
  runs: number;
  nodeOptions: string;
  rows: ColdRow[];
}

interface Target {
  name: string;
  kind: Kind;
  /** One event per run (none: import only). */
  events: unknown[] | null;
  expected: string;
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
        dynamodb: { Keys: marshal({ pk: item.pk, sk: item.sk }), NewImage: marshal(item), SequenceNumber: String(1000 + i), StreamViewType: 'NEW_IMAGE' },
      },
    ],
  })) as DynamoDBStreamEvent[];
};

/** Every function in functions/ with the events of its cold runs: realistic, successful calls. */
const targets = async (ctx: PartContext): Promise<Target[]> => {
  // The large team: 8 members for role changes, RUNS to remove, and some to spare.
  const state = await ctx.steadyState(RUNS + 25);
  const byName = new Map<string, Target>();
  for (const scenario of scenarios(state, ctx.writer)) {
    if (byName.has(scenario.name)) continue; // the first (smallest) variant of a function
    const request = await scenario.prepare(RUNS);
    const events = Array.from({ length: RUNS }, (_, i) => {
      const req = request(i);
      if (!req) throw new Error(`${scenario.label}: pool used up`);
      const { name, event } = toEvent(req);
      if (name !== scenario.name) throw new Error(`${scenario.label} is served by ${name}, not ${scenario.name}`);
      return { method: req.method, event };
    });
    const kind = events[0]?.method === 'GET' ? 'read' : 'write';
    byName.set(scenario.name, { name: scenario.name, kind, events: events.map((e) => e.event), expected: String(scenario.status) });
  }
  const invites = state.alphaInvites.slice(0, RUNS).map((i) => i.uuid);
  byName.set('mailer', { name: 'mailer', kind: 'write', events: await mailerEvents(ctx, invites), expected: '0 failed' });
  // Rotation steps talk to Secrets Manager, which has no local stand-in here.
  byName.set('keys-rotate', { name: 'keys-rotate', kind: 'import only', events: null, expected: 'not invoked' });

  // A function added since the scenarios were written: its import is still measured.
  for (const name of new Set([...functionNames(), ...ROUTES.map((r) => r.name)])) {
    if (!byName.has(name)) byName.set(name, { name, kind: 'import only', events: null, expected: 'not invoked (no scenario)' });
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
};

interface Sample {
  importMs: number;
  invokeMs: number | null;
  status: string;
}

const coldStart = async (target: Target, code: Bundle, eventFile: string | undefined): Promise<Sample> => {
  const { stdout, stderr } = await run(process.execPath, [RUNNER, code.file, ...(eventFile ? [eventFile] : [])], {
    // LAMBDA_TASK_ROOT: where a function finds the files shipped beside it (lib/shipped.ts).
    env: { ...process.env, NODE_OPTIONS, LAMBDA_TASK_ROOT: code.dir },
    maxBuffer: 16 * 1024 * 1024,
  });
  const line = stdout.split('\n').find((l) => l.startsWith('COLD '));
  if (!line) throw new Error(`cold start of ${target.name} printed no result:\n${stdout}${stderr}`);
  const sample = JSON.parse(line.slice(5)) as Sample;
  // The report shows the unexpected answer; the worker log (run.ts prints where) keeps what the function said.
  if (sample.status !== target.expected) console.error(`cold start of ${target.name} answered ${sample.status}:\n${stdout}${stderr}`);
  return sample;
};

const measure = async (ctx: PartContext, list: Target[], dir: string): Promise<ColdResult> => {
  ctx.progress(`cold start: bundling ${list.length} functions and the floor`);
  const shipped = (name: string) => (ROUTES as readonly Route[]).find((r) => r.name === name)?.files ?? [];
  const bundles = await Promise.all(list.map((t) => bundle(t.name, functionEntry(t.name), dir, shipped(t.name))));
  const floor = await bundleFloor(dir);
  // The floor gets an API event too, which it ignores: measured the same way as the others.
  const all: (Target & { bundle: Bundle })[] = [
    ...list.map((t, i) => ({ ...t, bundle: bundles[i] as Bundle })),
    { name: 'floor', kind: 'floor', events: list.find((t) => t.name === 'fallback')?.events ?? null, expected: '200', bundle: floor },
  ];

  const samples = new Map<string, Sample[]>(all.map((t) => [t.name, []]));
  // Round-robin over the functions: a noisy moment of the machine spreads over all of them.
  for (let r = 0; r < RUNS; r++) {
    ctx.progress(`cold start: round ${r + 1}/${RUNS}`);
    for (const t of all) {
      let eventFile: string | undefined;
      if (t.events) {
        eventFile = join(dir, `${t.name}.${r}.json`);
        writeFileSync(eventFile, JSON.stringify(t.events[r]));
      }
      samples.get(t.name)?.push(await coldStart(t, t.bundle, eventFile));
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
    };
  });
  return { runs: RUNS, nodeOptions: NODE_OPTIONS, rows };
};

export const runColdStart = async (ctx: PartContext): Promise<ColdResult> => {
  ctx.progress('cold start: seeding and preparing events');
  const list = await targets(ctx);
  const dir = mkdtempSync(join(tmpdir(), 'roster-bench-cold-'));
  try {
    return await measure(ctx, list, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};
