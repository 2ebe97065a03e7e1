import type { PartContext } from './context.ts';
import type { Bound } from './scale-model.ts';
import { invokeDirect, isRead } from './invoke.ts';
import { type DynamoCall, meterHandlers, recordCalls } from './meter.ts';
import { LARGE_TEAM, scenarios } from './scenarios.ts';

/** DynamoDB work of one warm call per endpoint, in the steady state. */
export interface CapacityRow {
  label: string;
  name: string;
  read: boolean;
  status: number;
  expected: number;
  /** Requests by operation, in the order first made. */
  requests: Record<string, number>;
  total: number;
  rcu: number;
  wcu: number;
  /** The scenario's own hottest key, when not its route's (bench/scale-model.ts BOUNDS). */
  bound?: Bound;
}

export interface CapacityResult {
  rows: CapacityRow[];
}

const byOperation = (calls: DynamoCall[]): Record<string, number> => {
  const counts: Record<string, number> = {};
  for (const { operation } of calls) counts[operation] = (counts[operation] ?? 0) + 1;
  return counts;
};

/** CAPACITY_ONLY=invites-bulk,teams-get: only these functions' scenarios, for a quick look. */
const ONLY = process.env.CAPACITY_ONLY?.split(',').filter(Boolean);

/** `bigSize`: the large team's members (test/load/scale.test.ts measures with fewer: a page costs the same). */
export const runCapacity = async (ctx: PartContext, bigSize = LARGE_TEAM): Promise<CapacityResult> => {
  meterHandlers();
  ctx.progress(`capacity: seeding the steady state (a team of ${bigSize.toLocaleString('en-US')})`);
  const state = await ctx.steadyState(bigSize);
  const rows: CapacityRow[] = [];
  for (const scenario of scenarios(state, ctx.writer).filter((s) => !ONLY || ONLY.includes(s.name))) {
    const request = await scenario.prepare(2);
    const [warm, measured] = [request(0), request(1)];
    if (!warm || !measured) throw new Error(`${scenario.label}: no request to send`);
    // The first call may load the handler and fill caches (public keys, JWKS): not a warm call.
    await invokeDirect(warm);
    const { value, calls } = await recordCalls(() => invokeDirect(measured), { capacity: true });
    rows.push({
      label: scenario.label,
      name: scenario.name,
      read: isRead(measured),
      status: value.status,
      expected: scenario.status,
      requests: byOperation(calls),
      total: calls.length,
      rcu: calls.reduce((sum, c) => sum + c.rcu, 0),
      wcu: calls.reduce((sum, c) => sum + c.wcu, 0),
      ...(scenario.bound ? { bound: scenario.bound } : {}),
    });
  }
  return { rows };
};
