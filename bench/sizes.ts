/** The benchmark's sizes: `full` (the figures in `bench/results/`) and `small` (part of the test command). */
import type { AtRestSize } from './scenarios/at-rest';
import type { ScaleSize } from './scenarios/scale';

/** How much each scenario does. */
export interface BenchSize {
  /** Scenario 1: objects per system, created one at a time. */
  readonly latencyObjects: number;
  /** Scenario 2: objects per system, created at once. */
  readonly burstObjects: number;
  /** Scenario 3: spec updates to one object. */
  readonly stormUpdates: number;
  /** Scenario 4: objects held by the bridge and by the bare informer. */
  readonly memoryObjects: number;
  /** Scenario 4: object workflows cached by the worker (after a warm-up of 10). */
  readonly memoryWorkflows: number;
  /** Scenario 5: steady-state passes counted per system. */
  readonly costPasses: number;
  /** Scenario 6: the built-ins at rest. */
  readonly atRest: AtRestSize;
  /** Scenario 7: objects team A creates at once. */
  readonly noisyFloodObjects: number;
  /**
   * Scenario 7: team B's changes measured with A quiet (one a second), and at least as many during the
   * flood. Full size measures about as many quiet as a flood lasts seconds, so both p99s come from
   * samples of one size: the p99 of 30 is about the 97th percentile, read against a flood's p99 of 120.
   */
  readonly noisyQuietChanges: number;
  /** Scenario 8: objects moved by each promote of a new operator version. */
  readonly upgradeObjects: number;
  /** Scenario 8: the objects' drift-check interval (the promote without wake moves each at its next check). */
  readonly upgradeDriftInterval: string;
  /** Scenario 9: objects, namespaces and the rest windows of the scale scenario. */
  readonly scale: ScaleSize;
}

/** The size names. */
export type SizeName = 'full' | 'small';

/** The sizes. */
export const sizes: Record<SizeName, BenchSize> = {
  full: {
    latencyObjects: 200,
    burstObjects: 1000,
    stormUpdates: 1000,
    memoryObjects: 10_000,
    memoryWorkflows: 1000,
    costPasses: 50,
    // The plans' default intervals (30 minutes), and 1 minute beside them over 5 checks.
    atRest: { shortInterval: '1 minute', shortCycles: 5 },
    noisyFloodObjects: 5000,
    noisyQuietChanges: 120,
    upgradeObjects: 1000,
    upgradeDriftInterval: '1 minute',
    // 50,000 objects: the same with `objects: 50_000` (`npm run bench -- --scale-objects 50000`).
    scale: { objects: 10_000, namespaces: 100, restSeconds: 600, driftInterval: '5 minutes' },
  },
  small: {
    latencyObjects: 10,
    burstObjects: 50,
    stormUpdates: 100,
    memoryObjects: 500,
    memoryWorkflows: 50,
    costPasses: 5,
    // Half a minute for every object (the shortest interval the plans allow), one check each.
    atRest: { shortInterval: '30 seconds', shortCycles: 1, defaultOverride: '30 seconds' },
    noisyFloodObjects: 100,
    noisyQuietChanges: 5,
    upgradeObjects: 20,
    upgradeDriftInterval: '15 seconds',
    // Kept small: the test command runs it (the rest windows are what it costs).
    scale: { objects: 200, namespaces: 10, restSeconds: 40, driftInterval: '30 seconds' },
  },
};
