/**
 * The object workflow survives its worker: a worker process is SIGKILLed in the middle of a step, a
 * new worker process takes over, the pass finishes, and every step's side effect happened once.
 * Also: a worker process shuts down gracefully on SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { Pool } from 'pg';
import { createCounterTables } from '../fixtures/counter/reconciler';
import { Counters, installCounterCrds, stepEffects, stepRuns, waitFor } from '../support/counter-harness';
import { randomSuffix, useStack } from '../support/harness';
import { writeHistory } from '../support/histories';

describe('objectWorkflow across worker crashes', () => {
  const t = useStack();
  const taskQueue = `crash-${randomSuffix()}`;
  let pool: Pool;
  let bundlePath: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    pool = new Pool({ connectionString: t.endpoints.postgresUrl, max: 4 });
    await createCounterTables(pool);
    await installCounterCrds(t);
    const bundle = await bundleWorkflowCode({ workflowsPath: require.resolve('../fixtures/counter-workflows') });
    bundlePath = join(mkdtempSync(join(tmpdir(), 'homeostat-bundle-')), 'workflow-bundle.js');
    writeFileSync(bundlePath, bundle.code);
  }, 120_000);

  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await pool?.end();
  });

  async function startWorker(): Promise<ChildProcess> {
    const options = {
      temporalAddress: t.endpoints.temporalAddress,
      namespace: t.endpoints.temporalNamespace,
      taskQueue,
      kubeconfig: t.endpoints.kubeconfig,
      postgresUrl: t.endpoints.postgresUrl,
      workflowBundlePath: bundlePath,
    };
    // node itself runs the worker (through tsx's loader), so child.pid is the process we kill.
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(__dirname, '../fixtures/counter-worker-main.ts'), JSON.stringify(options)],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    children.push(child);
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('READY')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`worker exited early with ${code}`)));
    });
    return child;
  }

  const exited = (child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> =>
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve({ code: child.exitCode, signal: child.signalCode })
      : new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));

  it('given a worker SIGKILLed in the middle of a step, a new worker finishes the pass and each step took effect once', async () => {
    const counters = new Counters(t, taskQueue);
    const first = await startWorker();
    const name = t.unique('crash');
    const obj = await counters.create(name, { message: 'resilient pony', slowMs: 3000 });
    await counters.request(obj, 'added');
    const uid = obj.metadata.uid!;
    // publish is running (it heartbeats for 3 s): kill the worker under it.
    await waitFor(
      async () => (await stepRuns(pool, uid)).some((r) => r.step === 'publish' && r.finished === null) || undefined,
    );
    first.kill('SIGKILL');
    expect(await exited(first)).toEqual({ code: null, signal: 'SIGKILL' });

    const second = await startWorker();
    const killedAt = Date.now();
    await counters.waitForPhase(name, 'Ready', 1, 60_000);
    const recoveredMs = Date.now() - killedAt;

    const runs = await stepRuns(pool, uid);
    const publish = runs.filter((r) => r.step === 'publish');
    expect(publish).toHaveLength(2);
    expect(publish[0]).toMatchObject({ worker: first.pid, finished: null });
    expect(publish[1]).toMatchObject({ worker: second.pid, outcome: 'ok' });
    expect(runs.filter((r) => r.step === 'prepare')).toHaveLength(1);
    expect(runs.filter((r) => r.step === 'audit')).toHaveLength(1);
    expect(await stepEffects(pool, uid)).toEqual({ 'prepare@1': 1, 'publish@1': 1, 'audit@1': 1 });
    process.stdout.write(`worker crash: pass finished ${recoveredMs} ms after the new worker started\n`);
    if (process.env.RECORD_HISTORIES === '1') {
      const history = await counters.handle(name).fetchHistory();
      writeHistory(join(__dirname, '../histories/worker-killed-mid-step.json'), history);
    }

    // Graceful shutdown: SIGTERM drains the worker and the process exits 0.
    second.kill('SIGTERM');
    expect(await exited(second)).toEqual({ code: 0, signal: null });
  }, 120_000);
});
