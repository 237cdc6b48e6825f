/**
 * The benchmark at its small size, on the run's stack, so it cannot rot: every scenario runs for
 * homeostat and its baselines and the results file holds numbers for all six. No timing is asserted.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runBench } from '../../bench';
import { Stack } from '../../devstack';

/** Every number found in a JSON value, with its path. */
function numbers(value: unknown, path = ''): [string, number][] {
  if (typeof value === 'number') return [[path, value]];
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([k, v]) => numbers(v, `${path}.${k}`));
}

describe('bench: homeostat against its baselines (small size)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'homeostat-bench-test-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('given the small size, it runs all nine scenarios for every system on the run stack and writes results with numbers', async () => {
    const name = process.env.HOMEOSTAT_TEST_STACK;
    if (!name) throw new Error('HOMEOSTAT_TEST_STACK is not set: run integration tests through jest (global setup)');
    const stack = await Stack.attach(name);
    const lines: string[] = [];
    const { files } = await runBench({ size: 'small', stack, resultsDir: dir, progress: (l) => lines.push(l) });

    const result = JSON.parse(readFileSync(files.json, 'utf8'));
    expect(result.size).toBe('small');
    expect(result.workers).toBe('processes');
    expect(Object.keys(result.scenarios).sort()).toEqual([
      'atRest',
      'burst',
      'cost',
      'latency',
      'memory',
      'noisyNeighbour',
      'scale',
      'storm',
      'upgrade',
    ]);
    const systems = ['homeostat', 'homeostatRegular', 'rawTemporal', 'controller'];
    expect(Object.keys(result.scenarios.latency.systems).sort()).toEqual([...systems].sort());
    expect(Object.keys(result.scenarios.burst.systems).sort()).toEqual([...systems].sort());
    expect(Object.keys(result.scenarios.storm.systems).sort()).toEqual(['controller', 'homeostat']);
    for (const s of systems) {
      expect(result.scenarios.latency.systems[s].n).toBe(result.parameters.latencyObjects);
      expect(result.scenarios.burst.systems[s].latency.n).toBe(result.parameters.burstObjects);
    }
    // Every figure is a finite number, and the counts are what the scenarios did.
    const all = numbers(result.scenarios);
    expect(all.length).toBeGreaterThan(50);
    expect(all.filter(([, v]) => !Number.isFinite(v))).toEqual([]);
    expect(result.scenarios.storm.systems.homeostat.signalsSent).toBeGreaterThan(0);
    expect(result.scenarios.storm.systems.homeostat.passes).toBeGreaterThan(0);
    expect(result.scenarios.storm.systems.controller.passes).toBeGreaterThan(0);
    const noisy = result.scenarios.noisyNeighbour!;
    const local = noisy.localSteps!;
    const regular = noisy.modes!; // both workers unless --noisy-steps says otherwise
    for (const figures of [regular.on, regular.off, local.on, local.off, noisy.floor!]) {
      expect(figures.quiet.n).toBe(result.parameters.noisyQuietChanges);
      expect(figures.flood.n).toBeGreaterThanOrEqual(result.parameters.noisyQuietChanges);
      // B's history held the signal and the pass of at least one change made during the flood.
      expect(figures.floodStages?.passMs.n).toBeGreaterThan(0);
    }
    // The bridge's admission saw passes end through the objects' status (how many reach the hold time
    // first depends on the machine's load, so only that some were seen done is asserted).
    for (const figures of [regular.on, local.on]) expect(figures.slotReleases?.done).toBeGreaterThan(0);
    // The upgrade: every object moved twice (drift, then wake), with no failed workflow task.
    const moves = result.scenarios.upgrade.moves as {
      how: string;
      perObject: { n: number };
      actionsPerObject: number;
    }[];
    expect(moves.map((m) => m.how)).toEqual(['drift', 'wake']);
    for (const m of moves) {
      expect(m.perObject.n).toBe(result.parameters.upgradeObjects);
      expect(m.actionsPerObject).toBeGreaterThan(0);
    }
    expect(result.scenarios.upgrade.workflowTaskFailures).toBe(0);
    expect(result.scenarios.memory.bridge.cached).toBe(result.parameters.memoryObjects);
    expect(result.scenarios.memory.informer.cached).toBe(result.parameters.memoryObjects);
    expect(result.scenarios.memory.worker.cachedAfter).toBeGreaterThan(result.scenarios.memory.worker.cachedBefore);
    expect(result.scenarios.cost.homeostatRegular.actionsPerPass).toBeGreaterThanOrEqual(
      result.scenarios.cost.minimum.actionsPerPass,
    );
    expect(result.scenarios.cost.rawTemporal.eventsPerPass).toBeGreaterThan(0);
    // Local steps: one workflow task of markers instead of an action per activity.
    expect(result.scenarios.cost.homeostat.actionsPerPass).toBeLessThan(
      result.scenarios.cost.homeostatRegular.actionsPerPass,
    );
    // At rest: every built-in kind measured from its history over at least one drift check.
    const rest = result.scenarios.atRest.objects as { kind: string; checks: number; actions: number }[];
    expect(rest.map((o) => o.kind).sort()).toEqual([
      'App',
      'App',
      'PostgresDatabase',
      'PostgresDatabase',
      'PostgresServer',
    ]);
    for (const o of rest) {
      expect(o.checks).toBeGreaterThanOrEqual(1);
      expect(o.actions).toBeGreaterThan(0);
    }

    // Scale: every object created and Ready on both systems, the restart confirmed, drift checks counted.
    const scale = result.scenarios.scale;
    expect(scale.homeostat.create.latency.n).toBe(result.parameters.scale.objects);
    expect(scale.controller.create.latency.n).toBe(result.parameters.scale.objects);
    expect(scale.homeostat.memory.bridgeCached).toBe(result.parameters.scale.objects);
    expect(scale.homeostat.change.latency.n).toBe(Math.max(1, Math.round(result.parameters.scale.objects / 100)));
    expect(scale.homeostat.drift.history.checks).toBeGreaterThan(0);
    // Step 5 checks a share of the objects at the default's rate, and splits the worker's CPU by thread.
    expect(scale.homeostat.drift.objectsChecked).toBeLessThanOrEqual(result.parameters.scale.objects);
    expect(scale.homeostat.rest.workerThreads).toEqual(expect.objectContaining({ main: expect.any(Number) }));
    expect(Object.keys(scale.homeostat.drift.workerMsPerCheckByThread)).toEqual(
      expect.arrayContaining(['main', 'workflow', 'rustCore']),
    );

    // The markdown table has a row per metric and the environment it was measured in.
    const md = readFileSync(files.md, 'utf8');
    for (const heading of ['1. Latency', '2. Burst', '3. Storm', '4. Memory', '5. Cost', '6. At rest']) {
      expect(md).toContain(heading);
    }
    expect(md).toContain('per million actions');
    expect(result.environment.versions.kubernetes).toMatch(/^v1\./);
    process.stdout.write(`${md}\n`);
  }, 1_800_000);
});
