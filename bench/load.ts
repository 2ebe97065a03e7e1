import { startLocalServer } from '#lib/http/server.ts';
import type { PartContext } from './context.ts';
import { type ApiRequest, httpClient, invokeDirect } from './invoke.ts';
import { meterHandlers, recordCalls } from './meter.ts';
import { LARGE_TEAM, type Scenario, scenarios } from './scenarios.ts';
import { type Summary, percentile, summarize, unionLength } from './stats.ts';

const CONCURRENCY = 8;
const LOAD_SECONDS = 3;
/** Calls one at a time, as one Lambda instance serves them, for the handler's own time. */
const SEQUENTIAL = 40;
const WARMUP = 10;
/** Requests prepared for writes that cannot repeat; a load that uses them up ends early. */
const POOL = 2000;

export interface LoadRow {
  label: string;
  name: string;
  hashes: boolean;
  /** Through the local HTTP server, CONCURRENCY at a time. */
  latencyMs: Summary;
  requests: number;
  seconds: number;
  perSecond: number;
  /** Answers other than the expected success, by status (0: no answer). */
  errors: Record<string, number>;
  /** One at a time, in process: the handler's wall time ... */
  handlerMs: Summary;
  /** ... less the union of its DynamoDB SDK calls (marshalling, signing, retries, parsing included) ... */
  excludingSdkP50: number;
  /** ... or less only the HTTP exchanges with DynamoDB (the SDK's own CPU then counts as the handler's). */
  excludingNetworkP50: number;
}

export interface LoadResult {
  concurrency: number;
  seconds: number;
  sequential: number;
  rows: LoadRow[];
}

/** Handler time one at a time: wall, and wall less DynamoDB, per call. */
const sequential = async (scenario: Scenario, request: (i: number) => ApiRequest | undefined) => {
  const wall: number[] = [];
  const exSdk: number[] = [];
  const exNetwork: number[] = [];
  for (let i = 0; i < WARMUP + SEQUENTIAL; i++) {
    const req = request(i);
    if (!req) throw new Error(`${scenario.label}: pool used up`);
    const { value, calls } = await recordCalls(() => invokeDirect(req));
    if (value.status !== scenario.status) throw new Error(`${scenario.label}: ${value.status} ${JSON.stringify(value.body)}`);
    if (i < WARMUP) continue;
    wall.push(value.handlerMs);
    exSdk.push(value.handlerMs - unionLength(calls.map((c) => c.sdk)));
    exNetwork.push(value.handlerMs - unionLength(calls.flatMap((c) => c.network)));
  }
  return { handlerMs: summarize(wall), excludingSdkP50: percentile(exSdk, 50), excludingNetworkP50: percentile(exNetwork, 50) };
};

/** CONCURRENCY clients, each sending its next request when the last one is answered, for LOAD_SECONDS. */
const drive = async (
  send: (req: ApiRequest) => Promise<number>,
  request: (i: number) => ApiRequest | undefined,
  first: number,
  expected: number,
) => {
  const latencies: number[] = [];
  const errors: Record<string, number> = {};
  let next = first;
  const started = performance.now();
  const deadline = started + LOAD_SECONDS * 1000;
  const client = async () => {
    for (let req = request(next++); req && performance.now() < deadline; req = request(next++)) {
      const sent = performance.now();
      const status = await send(req).catch(() => 0);
      latencies.push(performance.now() - sent);
      if (status !== expected) errors[status] = (errors[status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, client));
  const seconds = (performance.now() - started) / 1000;
  return { latencyMs: summarize(latencies), requests: latencies.length, seconds, perSecond: latencies.length / seconds, errors };
};

export const runLoad = async (ctx: PartContext): Promise<LoadResult> => {
  meterHandlers();
  ctx.progress('load: seeding the steady state (if not seeded yet)');
  const state = await ctx.steadyState(LARGE_TEAM);
  const server = await startLocalServer(0);
  const http = httpClient(server.url, CONCURRENCY);
  const rows: LoadRow[] = [];
  try {
    for (const scenario of scenarios(state, ctx.writer)) {
      ctx.progress(`load: ${scenario.label}`);
      const request = await scenario.prepare(WARMUP + SEQUENTIAL + POOL);
      const alone = await sequential(scenario, request);
      const loaded = await drive(http.send, request, WARMUP + SEQUENTIAL, scenario.status);
      rows.push({ label: scenario.label, name: scenario.name, hashes: scenario.hashes ?? false, ...loaded, ...alone });
    }
  } finally {
    http.close();
    await server.close();
  }
  return { concurrency: CONCURRENCY, seconds: LOAD_SECONDS, sequential: SEQUENTIAL, rows };
};
