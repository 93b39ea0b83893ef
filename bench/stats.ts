// Percentile math for the benchmark: every latency figure of the report goes through here, so
// the load generator, the propagation watch and the fan-out watch are summarised the same way.

export interface Summary {
  count: number;
  min: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/**
 * The p-th percentile (0..100) of ascending `sorted` values, interpolating linearly between the
 * two closest ranks (numpy's default, "R-7"): p50 of [1, 2, 3, 4] is 2.5, p100 is the maximum.
 * NaN for an empty list.
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be within 0..100, got ${p}`);
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const rank = (p / 100) * (n - 1);
  const below = Math.floor(rank);
  const above = Math.min(below + 1, n - 1);
  const low = sorted[below] as number;
  const high = sorted[above] as number;
  return low + (high - low) * (rank - below);
}

/** count, min, mean, p50/p90/p99 and max of `samples` (any order; not modified). */
export function summarize(samples: readonly number[]): Summary {
  const sorted = Float64Array.from(samples).sort();
  const values = Array.from(sorted);
  let total = 0;
  for (const value of values) total += value;
  const count = values.length;
  return {
    count,
    min: count === 0 ? Number.NaN : (values[0] as number),
    mean: count === 0 ? Number.NaN : total / count,
    p50: percentile(values, 50),
    p90: percentile(values, 90),
    p99: percentile(values, 99),
    max: count === 0 ? Number.NaN : (values[count - 1] as number),
  };
}

/** The median of `values` (any order; not modified); NaN for none. */
export function median(values: readonly number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50);
}

/** `value` rounded to `digits` decimals, for display (NaN stays NaN). */
export function round(value: number, digits = 2): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** a / b, or NaN when b is 0 (a ratio the report shows as "n/a"). */
export function ratio(a: number, b: number): number {
  return b === 0 ? Number.NaN : a / b;
}
