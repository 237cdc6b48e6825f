/**
 * Replay: histories recorded from the integration tests (test/histories, written with
 * RECORD_HISTORIES=1) replay against the current workflow code without nondeterminism; a deliberately
 * nondeterministic change of the plan is caught on every one of them.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { bundleWorkflowCode, Worker, type ReplayResult } from '@temporalio/worker';
import { readHistory } from '../support/histories';

const dir = join(__dirname, '../histories');
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .sort();

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
    expect(files).toEqual(
      expect.arrayContaining([
        'create-ready-update.json',
        'invalid-then-fixed.json',
        'flaky-step.json',
        'deletion.json',
        'reconcile-now.json',
        'drift-timer.json',
        'continue-as-new-carrying-request.json',
        'worker-killed-mid-step.json',
      ]),
    );
  });

  it('given the current workflow code, every history replays deterministically', async () => {
    const results = await replay(require.resolve('../fixtures/counter-workflows'));
    expect(Object.keys(results).sort()).toEqual(files.map((f) => f.replace(/\.json$/, '')));
    for (const [id, result] of Object.entries(results)) {
      expect({ id, error: result.error?.message }).toEqual({ id, error: undefined });
    }
  }, 180_000);

  it('given a nondeterministic change of the workflow code (a timer first), replay fails with a determinism violation', async () => {
    const results = await replay(require.resolve('../fixtures/counter-workflows-nondeterministic'));
    for (const [id, result] of Object.entries(results)) {
      expect({ id, error: result.error?.name }).toEqual({ id, error: 'DeterminismViolationError' });
    }
  }, 180_000);
});
