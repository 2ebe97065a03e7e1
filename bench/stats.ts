/** Percentiles by the nearest-rank method on a sorted copy: no interpolation between samples. */
export const percentile = (samples: readonly number[], p: number): number => {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
};

export interface Summary {
  n: number;
  p50: number;
  p90: number;
  p99: number;
}

export const summarize = (samples: readonly number[]): Summary => ({
  n: samples.length,
  p50: percentile(samples, 50),
  p90: percentile(samples, 90),
  p99: percentile(samples, 99),
});

/** Total length of the union of [start, end] intervals: overlapping calls count once. */
export const unionLength = (intervals: readonly (readonly [number, number])[]): number => {
  const sorted = [...intervals].sort((a, b) => a[0] - b[0]);
  let total = 0;
  let [start, end] = [Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY];
  for (const [s, e] of sorted) {
    if (s > end) {
      if (end > start) total += end - start;
      [start, end] = [s, e];
    } else if (e > end) end = e;
  }
  if (end > start) total += end - start;
  return total;
};
