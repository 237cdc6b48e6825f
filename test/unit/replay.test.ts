/**
 * Replay: histories recorded from the integration tests (test/histories, written with
 * RECORD_HISTORIES=1) replay against the current workflow code without nondeterminism — those where the
 * plan travels in the observe activity's result (the counter test plans and the built-in App and
 * PostgresDatabase plans), and those recorded by homeostat 0.1 before it did (test/histories/v0.1,
 * replayed with the counter plans as legacy plans); a deliberately nondeterministic change of the
 * workflow code is caught on every one of them.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { bundleWorkflowCode, Worker, type ReplayResult } from '@temporalio/worker';
import { readHistory } from '../support/histories';

const dir = join(__dirname, '../histories');
const jsonIn = (d: string): string[] =>
  readdirSync(join(dir, d))
    .filter((f) => f.endsWith('.json'))
    .map((f) => (d === '.' ? f : `${d}/${f}`))
    .sort();
const files = [...jsonIn('.'), ...jsonIn('v0.1')];

function histories() {
  return files.map((file) => ({
    workflowId: file.replace(/\.json$/, ''),
    history: readHistory(join(dir, file)),
  }));
}

async function replay(workflowsPath: string): Promise<Record<string, ReplayResult>> {
  const { code } = await bundleWorkflowCode({ workflowsPath });
  const results: Record<string, ReplayResult> = {};
  for await (const result of Worker.runReplayHistories({ workflowBundle: { code } }, histories())) {
    results[result.workflowId] = result;
  }
  return results;
}

describe('replay of recorded object workflow histories', () => {
  it('given the committed histories, there are enough of them to mean something', () => {
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
    expect(files).toEqual(
      expect.arrayContaining([
        ...recorded,
        ...recorded.map((f) => `v0.1/${f}`),
        'builtin-app-self-healing.json',
        'builtin-postgres-database-drift.json',
        'local-steps.json',
        'fused-leading-steps.json',
        'drift-timer-window.json',
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
    }
  }, 180_000);
});
