import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { CapacityRow } from '#bench/capacity.ts';
import type { LoadRow } from '#bench/load.ts';
import { BOUNDS, LIMITS, MARKERS, PRICES, boundOf, costPerMillion, keyRate, lambdaRate, modelTable } from '#bench/scale-model.ts';
import { FALLBACK, ROUTES } from '#lib/http/routes.ts';

/** docs/scale.md's capacity table is the model's output for the latest benchmark results. */
const latest = JSON.parse(readFileSync(new URL('../../bench/results/latest.json', import.meta.url), 'utf8')) as {
  results: { capacity: { rows: CapacityRow[] }; load: { rows: LoadRow[] } };
};
const doc = readFileSync(new URL('../../docs/scale.md', import.meta.url), 'utf8');
const names = [...ROUTES.map((r) => r.name), FALLBACK];

describe('capacity model (docs/scale.md)', () => {
  it('has a bound for every route and the fallback, and no other', () => {
    expect(Object.keys(BOUNDS).sort()).toEqual([...names].sort());
  });

  it('has a measurement of every route in bench/results/latest.json (npm run bench)', () => {
    const measured = new Set(latest.results.capacity.rows.map((r) => r.name));
    expect(names.filter((n) => !measured.has(n))).toEqual([]);
    for (const row of latest.results.capacity.rows) expect(row.status, row.label).toBe(row.expected);
  });

  it('never says a key takes more units than the whole call spends', () => {
    for (const row of latest.results.capacity.rows) {
      const bound = boundOf(row) as (typeof BOUNDS)[keyof typeof BOUNDS];
      expect(bound.rcu, row.label).toBeLessThanOrEqual(row.rcu);
      expect(bound.wcu, row.label).toBeLessThanOrEqual(row.wcu);
    }
  });

  it('divides by the tighter limit', () => {
    expect(keyRate({ rcu: 2, wcu: 4 }, LIMITS.partitionRcu, LIMITS.partitionWcu)).toBe(250);
    expect(keyRate({ rcu: 6, wcu: 0 }, LIMITS.partitionRcu, LIMITS.partitionWcu)).toBe(500);
    expect(keyRate({ rcu: 0, wcu: 0 }, LIMITS.partitionRcu, LIMITS.partitionWcu)).toBeNull();
    expect(lambdaRate(20, 10)).toBe(500);
  });

  it('prices a million calls from their parts: the gateway, Lambda by the millisecond, the units, the log line', () => {
    // $1 gateway + $0.20 Lambda requests + 10 ms at 1 GB ($0.133) + 2 RCU ($0.25) + 1 WCU ($0.625) + 1 KB of logs ($0.477).
    expect(costPerMillion({ rcu: 2, wcu: 1 }, 9.2)).toBeCloseTo(1 + 0.2 + 0.133334 + 0.25 + 0.625 + 0.476837, 5);
    expect(PRICES.apiRequest * 1e6).toBe(1);
  });

  it('is the table docs/scale.md shows (else: npm run scale:doc)', () => {
    const start = doc.indexOf(MARKERS.start) + MARKERS.start.length;
    const shown = doc.slice(start, doc.indexOf(MARKERS.end)).trim();
    expect(shown).toBe(modelTable(latest));
  });
});
