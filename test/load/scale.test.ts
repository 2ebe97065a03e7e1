import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import type { CapacityRow } from '#bench/capacity.ts';
import { BENCH_LIMITS } from '#bench/limits-env.ts';

/**
 * The units docs/scale.md's model divides are the code's: every route measured again here, on
 * DynamoDB Local, as the benchmark's capacity part does (with a large team of 150 rather than
 * 10,000: a page of 100 costs the same), must cost what bench/results/latest.json says. After a
 * change that moves them: `npm run bench` and `npm run scale:doc`.
 */
const latest = JSON.parse(readFileSync(new URL('../../bench/results/latest.json', import.meta.url), 'utf8')) as {
  results: { capacity: { rows: CapacityRow[] } };
};

it('every route spends the requests and units the latest benchmark measured', { timeout: 300_000 }, async () => {
  // The benchmark's settings and services (a provider, a DNS server's port), before the handlers load
  // and read them (bench/scenario-services.ts loads none).
  const { startScenarioServices } = await import('#bench/scenario-services.ts');
  const services = await startScenarioServices();
  Object.assign(process.env, BENCH_LIMITS, { MAIL_TRANSPORT: 'log' }, services.env);
  const [{ bulkWriter }, { runCapacity }, { steadyStateOnce }] = await Promise.all([
    import('#bench/bulk-write.ts'),
    import('#bench/capacity.ts'),
    import('#bench/context.ts'),
  ]);
  const writer = bulkWriter(process.env.DYNAMODB_ENDPOINT as string, process.env.TABLE_NAME as string);
  try {
    const { rows } = await runCapacity({ writer, progress: () => undefined, steadyState: steadyStateOnce(writer) }, 150);
    // Requests by command in one order, so that two rows compare as JSON.
    const shape = (r: CapacityRow) => ({
      name: r.name,
      status: r.status,
      requests: Object.fromEntries(Object.entries(r.requests).sort(([a], [b]) => a.localeCompare(b))),
      rcu: r.rcu,
      wcu: r.wcu,
    });
    const expected = latest.results.capacity.rows.map(shape);
    // The rows that differ, each beside its benchmark figure: a readable failure on one line.
    const differing = rows.map(shape).flatMap((measured, i) => {
      const benchmark = expected[i];
      return JSON.stringify(measured) === JSON.stringify(benchmark) ? [] : [{ measured, benchmark }];
    });
    expect(differing, JSON.stringify(differing)).toEqual([]);
    expect(rows).toHaveLength(expected.length);
  } finally {
    writer.close();
    await services.stop();
  }
});
