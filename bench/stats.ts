/**
 * Small statistics for benchmark samples. Medians (not means) because a 2-core machine shared with other
 * work produces occasional outliers that would drag a mean.
 */

/** Median, min and max of a set of samples. */
export interface Summary {
  median: number;
  min: number;
  max: number;
  count: number;
}

/** Summarises samples; throws on an empty list, because a figure without samples is a bench bug. */
export function summarize(values: readonly number[]): Summary {
  if (values.length === 0) throw new Error('no samples to summarise');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
  return { median, min: sorted[0] ?? 0, max: sorted[sorted.length - 1] ?? 0, count: sorted.length };
}

/** Nearest-rank percentile (p in 0..100): with few samples, p99 is the largest one, never an interpolation. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) throw new Error('no samples for a percentile');
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] ?? 0;
}

/** Rounds to a given number of decimals (for tables and JSON that people read). */
export function round(value: number, decimals = 2): number {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
}
