/** Summary statistics of the benchmark's samples. */

/** A summary of durations in milliseconds. */
export interface Summary {
  readonly n: number;
  readonly medianMs: number;
  /** Nearest-rank 99th percentile (the maximum below 100 samples). */
  readonly p99Ms: number;
  readonly meanMs: number;
  readonly minMs: number;
  readonly maxMs: number;
}

const round = (x: number, digits = 1): number => Number(x.toFixed(digits));

/** The nearest-rank percentile `p` (0–100) of sorted samples. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/** Median, p99, mean, min and max of samples (milliseconds, rounded to 0.1 ms). */
export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = sorted.reduce((s, x) => s + x, 0) / Math.max(1, sorted.length);
  return {
    n: sorted.length,
    medianMs: round(percentile(sorted, 50)),
    p99Ms: round(percentile(sorted, 99)),
    meanMs: round(mean),
    minMs: round(sorted[0] ?? Number.NaN),
    maxMs: round(sorted[sorted.length - 1] ?? Number.NaN),
  };
}

/** `a / b` rounded to two digits (NaN when `b` is 0). */
export function ratio(a: number, b: number): number {
  return b === 0 ? Number.NaN : round(a / b, 2);
}

/** Rounds to `digits` decimals. */
export { round };
