import { compareMarkdown, type LabelledResult } from '../../bench/compare';
import type { BenchResult } from '../../bench/report';

/** A result holding only the figures the comparison reads. */
function run(label: string, latencyMedian: number, burstMs: number): LabelledResult {
  const summary = { n: 1, medianMs: latencyMedian, p99Ms: latencyMedian * 2, meanMs: 0, minMs: 0, maxMs: 0 };
  const burst = { totalMs: burstMs, objectsPerSecond: 1000 / (burstMs / 1000), createMs: 0, latency: summary };
  return {
    label,
    result: {
      scenarios: {
        latency: { objects: 1, warmup: 0, systems: { homeostat: summary } },
        burst: { objects: 1000, createConcurrency: 64, systems: { homeostat: burst } },
      },
    } as unknown as BenchResult,
  };
}

describe('bench compare', () => {
  it('given runs, each figure is beside the first run’s with its ratio, and the spread is taken within runs of one label', () => {
    const table = compareMarkdown([run('off#1', 40, 25_000), run('on', 60, 30_000), run('off#2', 44, 24_000)]);
    const lines = table.split('\n');
    expect(lines[0]).toBe('| metric | off#1 | on | off#2 | run-to-run spread |');
    // median: 40 vs 60 (1.5×) vs 44 (1.1×); the two "off" runs differ by 10%, not by "on"'s 50%.
    expect(lines.find((l) => l.startsWith('| latency, local steps: median'))).toBe(
      '| latency, local steps: median (ms) | 40 | 60 (1.5×) | 44 (1.1×) | 10% |',
    );
    expect(lines.find((l) => l.startsWith('| burst, local steps: all Ready'))).toBe(
      '| burst, local steps: all Ready (s) | 25 | 30 (1.2×) | 24 (0.96×) | 4.2% |',
    );
    // A system no run measured shows dashes, not zeros.
    expect(lines.find((l) => l.startsWith('| latency, regular steps: median'))).toBe(
      '| latency, regular steps: median (ms) | — | — | — | — |',
    );
  });

  it('given no runs, it says what to give', () => {
    expect(() => compareMarkdown([])).toThrow(/LABEL=results.json/);
  });
});
