/**
 * Replay: the recorded histories of every homeostat version (`test/histories/<version>/`, written by
 * the integration tests with RECORD_HISTORIES=1) replay against the current workflow code without
 * nondeterminism. `0.1.0/` was recorded by homeostat 0.1.0, before plans travelled in the observe
 * activity's result (replayed with the counter plans as legacy plans); `0.1-dev/` by the 0.1
 * development line (workflow-code versions 1–3); each later folder by its release. A deliberately
 * nondeterministic change of the workflow code is caught on every one of them, naming the event.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { bundleWorkflowCode, Worker, type ReplayResult } from '@temporalio/worker';
import { workflowBundleOptions } from '../../workers/workflow-bundle-options';
import { historiesRoot, homeostatVersion, readHistory } from '../support/histories';

const dir = historiesRoot;
const versions = readdirSync(dir)
  .filter((d) => statSync(join(dir, d)).isDirectory())
  .sort();
const files = versions.flatMap((d) =>
  readdirSync(join(dir, d))
    .filter((f) => f.endsWith('.json'))
    .map((f) => `${d}/${f}`)
    .sort(),
);

function histories() {
  return files.map((file) => ({
    workflowId: file.replace(/\.json$/, ''),
    history: readHistory(join(dir, file)),
  }));
}

async function replay(workflowsPath: string): Promise<Record<string, ReplayResult>> {
  // With the worker's interceptor modules: the pass trace's must replay every history too.
  // Bundled as every worker bundles it (shared modules included), so replay proves what runs.
  const { code } = await bundleWorkflowCode(workflowBundleOptions(workflowsPath));
  const results: Record<string, ReplayResult> = {};
  for await (const result of Worker.runReplayHistories({ workflowBundle: { code } }, histories())) {
    results[result.workflowId] = result;
  }
  return results;
}

describe('replay of recorded object workflow histories', () => {
  it('given the committed histories, every version has enough of them to mean something', () => {
    expect(versions).toEqual(expect.arrayContaining(['0.1.0', '0.1-dev', homeostatVersion]));
    const recorded = [
      'create-ready-update.json',
      'invalid-then-fixed.json',
      'flaky-step.json',
      'deletion.json',
      'reconcile-now.json',
      'drift-timer.json',
      'continue-as-new-carrying-request.json',
      'worker-killed-mid-step.json',
    ];
    const since = [
      ...recorded,
      'builtin-app-self-healing.json',
      'builtin-postgres-database-drift.json',
      'local-steps.json',
      'fused-leading-steps.json',
      'drift-timer-window.json',
    ];
    expect(files).toEqual(
      expect.arrayContaining([
        ...recorded.map((f) => `0.1.0/${f}`),
        ...since.map((f) => `0.1-dev/${f}`),
        ...since.map((f) => `${homeostatVersion}/${f}`),
      ]),
    );
  });

  it('given the current workflow code, every history replays deterministically', async () => {
    const results = await replay(require.resolve('../fixtures/counter-workflows'));
    expect(Object.keys(results).sort()).toEqual(files.map((f) => f.replace(/\.json$/, '')).sort());
    for (const [id, result] of Object.entries(results)) {
      expect({ id, error: result.error?.message }).toEqual({ id, error: undefined });
    }
  }, 180_000);

  it('given a nondeterministic change of the workflow code (a timer first), replay fails with a determinism violation', async () => {
    const results = await replay(require.resolve('../fixtures/counter-workflows-nondeterministic'));
    expect(Object.keys(results).sort()).toEqual(files.map((f) => f.replace(/\.json$/, '')).sort());
    for (const [id, result] of Object.entries(results)) {
      expect({ id, error: result.error?.name }).toEqual({ id, error: 'DeterminismViolationError' });
      // The failure says what diverged (`Missing associated machine for LocalActivity(1)`, a timer, an
      // activity), so a failing CI run names the event.
      expect(result.error?.message).toMatch(/Nondeterminism error: \S+/);
    }
  }, 180_000);
});
