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
import { recordHistory } from '../support/histories';

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
    const startedAt = Date.now();
    await counters.waitForPhase(name, 'Ready', 1, 60_000);
    const recoveredMs = Date.now() - startedAt;

    const runs = await stepRuns(pool, uid);
    const publish = runs.filter((r) => r.step === 'publish');
    expect(publish).toHaveLength(2);
    expect(publish[0]).toMatchObject({ worker: first.pid, finished: null });
    expect(publish[1]).toMatchObject({ worker: second.pid, outcome: 'ok' });
    expect(runs.filter((r) => r.step === 'prepare')).toHaveLength(1);
    expect(runs.filter((r) => r.step === 'audit')).toHaveLength(1);
    expect(await stepEffects(pool, uid)).toEqual({ 'prepare@1': 1, 'publish@1': 1, 'audit@1': 1 });
    process.stderr.write(`[figures] worker crash: the pass finished ${recoveredMs} ms after the new worker started\n`);
    await recordHistory('worker-killed-mid-step', () => counters.handle(name).fetchHistory());

    // Graceful shutdown: SIGTERM drains the worker and the process exits 0.
    second.kill('SIGTERM');
    expect(await exited(second)).toEqual({ code: 0, signal: null });
  }, 120_000);

  it('given a worker SIGKILLed inside a regular step that never heartbeats itself, the worker polling beside it re-runs the step within its default heartbeat timeout, not its 30 s start-to-close', async () => {
    const counters = new Counters(t, taskQueue);
    // Two workers poll (two replicas of the worker Deployment); the one running the step is killed.
    const workers = [await startWorker(), await startWorker()];
    const name = t.unique('crash-quiet');
    // prepare (a regular step: 30 s start-to-close, no heartbeat timeout of its own) takes 10 s.
    const obj = await counters.create(name, { message: 'quiet pony', stepDelayMs: 10_000 });
    await counters.request(obj, 'added');
    const uid = obj.metadata.uid!;
    const running = await waitFor(async () =>
      (await stepRuns(pool, uid)).find((r) => r.step === 'prepare' && r.finished === null),
    );
    const first = workers.find((w) => w.pid === running.worker)!;
    const second = workers.find((w) => w !== first)!;
    first.kill('SIGKILL');
    expect(await exited(first)).toEqual({ code: null, signal: 'SIGKILL' });
    const killedAt = Date.now();
    const rerun = await waitFor(
      async () => (await stepRuns(pool, uid)).find((r) => r.step === 'prepare' && r.worker === second.pid),
      20_000, // the step's start-to-close timeout is 30 s: only the heartbeat timeout moves it sooner
    );
    const rerunMs = Date.now() - killedAt;
    await counters.waitForPhase(name, 'Ready', 1, 60_000);
    const readyAt = Date.now();
    const runs = await stepRuns(pool, uid);
    const lastFinished = Math.max(...runs.map((r) => r.finished ?? 0));
    expect(runs.filter((r) => r.step === 'prepare')).toEqual([
      expect.objectContaining({ worker: first.pid, finished: null }),
      expect.objectContaining({ worker: second.pid, outcome: 'ok' }),
    ]);
    expect(rerun.attempt).toBe(2);
    expect(await stepEffects(pool, uid)).toEqual({ 'prepare@1': 1, 'publish@1': 1, 'audit@1': 1 });
    process.stderr.write(
      `[figures] worker SIGKILLed inside a 10 s regular step without heartbeats of its own: ` +
        `the step re-ran on the other worker ${rerunMs} ms after the kill (start-to-close timeout 30 s); ` +
        `Ready ${Math.round(readyAt - lastFinished)} ms after the last step finished\n`,
    );
    second.kill('SIGTERM');
    expect(await exited(second)).toEqual({ code: 0, signal: null });
  }, 120_000);
});
