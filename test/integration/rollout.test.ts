/**
 * `homeostat rollout` on the real stack: plain SDK workers with explicit Worker Deployment options run a
 * tiny PINNED stand-in of the object workflow (test/fixtures/pinned-workflows.ts) under two build IDs
 * of one deployment; the rollout library ramps, promotes, wakes, waits for drainage and rolls back
 * through Temporal's deployment API, refuses what it must with clear errors, and the CLI prints status.
 */
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, NativeConnection, Worker, type WorkflowBundle } from '@temporalio/worker';
import { type ObjectRef, reconcileRequestedSignal, workflowIdFor } from '../../core/definitions';
import {
  type CompatibilityGate,
  isRolloutError,
  type CompatibilityCheckRequest,
  describeDeployment,
  promote,
  ramp,
  rollback,
  rolloutStatus,
  type RolloutTarget,
  waitDrained,
  wake,
} from '../../core/rollout';
import { buildIdQuery, finishSignal, learnUidSignal } from '../fixtures/pinned-workflows';
import { eventually } from '../support/eventually';
import { randomSuffix, useStack } from '../support/harness';

const EventType = temporal.api.enums.v1.EventType;

/**
 * The events Temporal Cloud bills as actions: a run started (a start or a continue-as-new's new run),
 * a signal, an activity or local activity (marker), a timer, a search-attribute upsert or properties
 * change, a child start, an external signal, an accepted update. Workflow tasks are not billed.
 */
const billable = new Set<number>([
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
  EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
  EventType.EVENT_TYPE_MARKER_RECORDED,
  EventType.EVENT_TYPE_TIMER_STARTED,
  EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES,
  EventType.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED,
  EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED,
  EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED,
]);

const cli = join(__dirname, '../../cli/homeostat.ts');

/** Runs `homeostat …args` from its sources with only the Temporal variables set; its exit status and output. */
function homeostat(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', cli, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: tmpdir(), ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** The rollout error code of a rejection, or the error itself when it is not one. */
async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (isRolloutError(err)) return `${err.code}: ${err.message}`;
    throw err;
  }
  throw new Error('expected a rejection');
}

describe('homeostat rollout', () => {
  const t = useStack();
  const suffix = randomSuffix();
  const deploymentName = `rollout-${suffix}`;
  const taskQueue = `rollout-${suffix}`;
  const [v1, v2] = [`v1-${suffix}`, `v2-${suffix}`];
  let target: RolloutTarget;
  let bundle: WorkflowBundle;
  const workers = new Map<string, { stop(): Promise<void> }>();
  const refs: ObjectRef[] = [1, 2].map((i) => ({
    group: 'rollout.test',
    version: 'v1',
    kind: 'Thing',
    namespace: 'team-a',
    name: `thing-${suffix}-${i}`,
  }));

  /** Started later, by a client that does not know its UID (as the HTTP API starts objects). */
  const third: ObjectRef = { ...refs[0]!, name: `thing-${suffix}-3` };
  /** Started after a promote or rollback, to see where new runs go. */
  const fourth: ObjectRef = { ...refs[0]!, name: `thing-${suffix}-4` };

  async function startWorker(buildId: string): Promise<void> {
    const connection = await NativeConnection.connect({ address: t.endpoints.temporalAddress });
    const worker = await Worker.create({
      connection,
      namespace: t.endpoints.temporalNamespace,
      taskQueue,
      workflowBundle: bundle,
      workerDeploymentOptions: {
        version: { deploymentName, buildId },
        useWorkerVersioning: true,
        defaultVersioningBehavior: 'PINNED',
      },
    });
    const running = worker.run();
    workers.set(buildId, {
      async stop() {
        worker.shutdown();
        await running.catch(() => {});
        await connection.close();
      },
    });
    // A version exists once one of its workers polled.
    await eventually(
      `version ${buildId} registered`,
      () => describeDeployment(t.temporal, target).catch(() => undefined),
      (d) => d?.versions.some((v) => v.buildId === buildId) === true,
    );
  }

  const buildOf = (c: Client, workflowId: string): Promise<string> =>
    c.workflow.getHandle(workflowId).query(buildIdQuery);

  beforeAll(async () => {
    target = { namespace: t.endpoints.temporalNamespace, deploymentName };
    bundle = await bundleWorkflowCode({
      workflowsPath: require.resolve('../fixtures/pinned-workflows'),
      logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
    });
    t.defer(async () => {
      for (const id of [...refs.map(workflowIdFor), workflowIdFor(fourth), workflowIdFor(third)]) {
        await t.temporal.workflow
          .getHandle(id)
          .terminate('test over')
          .catch(() => {});
      }
      for (const w of workers.values()) await w.stop();
    });
    await startWorker(v1);
    await promote(t.temporal, target, v1);
    // One object started with its request in the input, one by signal-with-start (its UID in the signal).
    await t.temporal.workflow.start('objectWorkflow', {
      workflowId: workflowIdFor(refs[0]!),
      taskQueue,
      args: [
        {
          ref: refs[0]!,
          pending: { ref: refs[0]!, uid: 'uid-1', generation: 1, resourceVersion: '1', reason: 'added' },
        },
      ],
    });
    await t.temporal.workflow.signalWithStart('objectWorkflow', {
      workflowId: workflowIdFor(refs[1]!),
      taskQueue,
      args: [{ ref: refs[1]! }],
      signal: reconcileRequestedSignal,
      signalArgs: [{ ref: refs[1]!, uid: 'uid-2', generation: 1, resourceVersion: '1', reason: 'added' }],
    });
    for (const ref of refs) expect(await buildOf(t.temporal, workflowIdFor(ref))).toBe(v1);
    await startWorker(v2);
  }, 180_000);

  it('given two builds of one deployment, status lists both with their status, pollers and running workflows', async () => {
    const status = await eventually(
      'both versions with their counts',
      () => rolloutStatus(t.temporal, target),
      // Visibility and the poller history catch up in their own time.
      (s) => s.versions.find((v) => v.buildId === v1)?.runningWorkflows === 2 && s.versions.every((v) => v.pollers),
    );
    expect(status.currentBuildId).toBe(v1);
    expect(status.versions.map((v) => [v.buildId, v.status, v.pollers, v.runningWorkflows])).toEqual([
      [v2, 'Inactive', true, 0],
      [v1, 'Current', true, 2],
    ]);
    expect(status.unversionedWorkflows).toBeGreaterThanOrEqual(0);
  });

  it('given a gate that reports incompatible workflows, promote and ramp are refused and routing is unchanged', async () => {
    const calls: CompatibilityCheckRequest[] = [];
    const gate: CompatibilityGate = async (_client, request) => {
      calls.push(request);
      return { checked: 2, incompatible: [{ workflowId: workflowIdFor(refs[0]!), error: 'carried state v9 unknown' }] };
    };
    expect(await codeOf(promote(t.temporal, target, v2, { gate }))).toMatch(
      /^ERR_ROLLOUT_INCOMPATIBLE: .*cannot take over 1 of 2 .*routing unchanged:\n.*carried state v9 unknown/s,
    );
    expect(await codeOf(ramp(t.temporal, target, v2, 30, { gate }))).toMatch(/^ERR_ROLLOUT_INCOMPATIBLE/);
    expect(calls[0]).toEqual({ ...target, candidateBuildId: v2, currentBuildId: v1, limit: 100 });
    const d = await describeDeployment(t.temporal, target);
    expect([d.currentBuildId, d.ramping]).toEqual([v1, undefined]);
    // --skip-check goes ahead without asking the gate.
    await ramp(t.temporal, target, v2, 10, { gate, skipCheck: true });
    expect(calls).toHaveLength(2);
    expect((await describeDeployment(t.temporal, target)).ramping).toEqual({ buildId: v2, percentage: 10 });
  });

  it('given ramp 30 then promote, new runs go to the new build and waking moves the pinned ones at 2 actions each', async () => {
    const gate: CompatibilityGate = async () => ({ checked: 2, incompatible: [] });
    await ramp(t.temporal, target, v2, 30, { gate });
    const ramping = await rolloutStatus(t.temporal, target);
    expect(ramping.versions.find((v) => v.buildId === v2)).toMatchObject({ status: 'Ramping', rampPercentage: 30 });

    expect(await promote(t.temporal, target, undefined, { gate })).toMatchObject({
      changed: true,
      currentBuildId: v2,
      previousCurrentBuildId: v1,
      checked: 2,
    });
    const d = await describeDeployment(t.temporal, target);
    expect([d.currentBuildId, d.ramping]).toEqual([v2, undefined]);
    const fresh = workflowIdFor(fourth);
    await t.temporal.workflow.start('objectWorkflow', { workflowId: fresh, taskQueue, args: [{ ref: fourth }] });
    expect(await buildOf(t.temporal, fresh)).toBe(v2);
    // The pinned runs stay on v1 until woken.
    for (const ref of refs) expect(await buildOf(t.temporal, workflowIdFor(ref))).toBe(v1);

    const oldRuns = await Promise.all(
      refs.map(async (ref) => (await t.temporal.workflow.getHandle(workflowIdFor(ref)).describe()).runId),
    );
    await eventually(
      'visibility lists the pinned runs',
      () =>
        t.temporal.workflow.count(
          `TemporalWorkerDeploymentVersion = '${deploymentName}:${v1}' AND ExecutionStatus = 'Running'`,
        ),
      (c) => c.count === 2,
    );
    const woken = await wake(t.temporal, target, { fromBuildId: v1, ratePerSecond: 5 });
    expect(woken).toMatchObject({ listed: 2, signalled: 2, queried: 0, skipped: [], failed: [], currentBuildId: v2 });
    for (const ref of refs) {
      await eventually(
        'woken onto v2',
        () => buildOf(t.temporal, workflowIdFor(ref)),
        (b) => b === v2,
      );
    }
    // Actions per object: the old run's events from the wake on, and the new run's.
    for (const [i, ref] of refs.entries()) {
      const old = await t.temporal.workflow.getHandle(workflowIdFor(ref), oldRuns[i]).fetchHistory();
      const events = old.events ?? [];
      const wakeAt = events.findLastIndex((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
      const next = await t.temporal.workflow.getHandle(workflowIdFor(ref)).fetchHistory();
      const actions = [...events.slice(wakeAt), ...(next.events ?? [])].filter((e) => billable.has(e.eventType ?? 0));
      expect(actions.map((e) => EventType[e.eventType ?? 0])).toEqual([
        'EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED',
        'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED',
      ]);
    }
  });

  it('given the old build holds no running pinned workflow any more, waitDrained sees it Drained', async () => {
    const drainage = await waitDrained(t.temporal, target, v1, 120_000, { intervalMs: 1000 });
    expect(drainage.status).toBe('Drained');
    expect(drainage.lastCheckedTime).toEqual(expect.any(String));
    const status = await rolloutStatus(t.temporal, target);
    expect(status.versions.find((v) => v.buildId === v1)).toMatchObject({ status: 'Drained', runningWorkflows: 0 });
    // The Current version never drains: refused at once rather than waited for.
    expect(await codeOf(waitDrained(t.temporal, target, v2, 5_000))).toMatch(/^ERR_ROLLOUT_REFUSED: .*is Current/);
  });

  it('given a rollback, the previous Current version is Current again, new runs go to it and waking moves every pinned run back', async () => {
    // An object whose first events name no UID (the HTTP API started it): wake asks its state.
    await t.temporal.workflow.start('objectWorkflow', {
      workflowId: workflowIdFor(third),
      taskQueue,
      args: [{ ref: third }],
    });
    await t.temporal.workflow.getHandle(workflowIdFor(third)).signal(learnUidSignal, 'uid-3');
    expect(await buildOf(t.temporal, workflowIdFor(third))).toBe(v2);

    const gate: CompatibilityGate = async () => ({ checked: 0, incompatible: [] });
    expect(await rollback(t.temporal, target, { gate })).toMatchObject({
      changed: true,
      currentBuildId: v1,
      previousCurrentBuildId: v2,
    });
    const d = await describeDeployment(t.temporal, target);
    expect([d.currentBuildId, d.ramping]).toEqual([v1, undefined]);
    const fresh = workflowIdFor(fourth);
    await t.temporal.workflow.getHandle(fresh).signal(finishSignal);
    await t.temporal.workflow.getHandle(fresh).result();
    await t.temporal.workflow.start('objectWorkflow', {
      workflowId: fresh,
      taskQueue,
      args: [{ ref: fourth }],
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    });
    expect(await buildOf(t.temporal, fresh)).toBe(v1);

    // Every run pinned to a version other than the Current one.
    await eventually(
      'visibility lists the runs pinned to v2',
      () =>
        t.temporal.workflow.count(
          `TemporalWorkerDeploymentVersion = '${deploymentName}:${v2}' AND ExecutionStatus = 'Running'`,
        ),
      (c) => c.count === 3,
    );
    const woken = await wake(t.temporal, target);
    expect(woken).toMatchObject({ listed: 3, signalled: 3, queried: 1, skipped: [], failed: [], currentBuildId: v1 });
    for (const ref of [...refs, third]) {
      await eventually(
        'woken back onto v1',
        () => buildOf(t.temporal, workflowIdFor(ref)),
        (b) => b === v1,
      );
    }
    expect((await waitDrained(t.temporal, target, v2, 120_000)).status).toBe('Drained');
  });

  it('given a build no worker polled, promote and ramp say to start its workers first', async () => {
    const never = `never-${suffix}`;
    expect(await codeOf(promote(t.temporal, target, never))).toBe(
      `ERR_ROLLOUT_REFUSED: deployment "${deploymentName}": no worker of build "${never}" has polled yet: start its workers first`,
    );
    expect(await codeOf(ramp(t.temporal, target, never, 5))).toMatch(/no worker of build .* has polled yet/);
    expect((await describeDeployment(t.temporal, target)).currentBuildId).toBe(v1);
  });

  it('given hostile input, every command refuses it with a clear error and changes nothing', async () => {
    const c = t.temporal;
    expect(await codeOf(ramp(c, target, v2, 150))).toMatch(/^ERR_ROLLOUT_INPUT: ramp 150: a ramp is a percentage/);
    expect(await codeOf(ramp(c, target, v2, -1))).toMatch(/^ERR_ROLLOUT_INPUT: ramp -1/);
    expect(await codeOf(ramp(c, target, v2, Number.NaN))).toMatch(/^ERR_ROLLOUT_INPUT: ramp NaN/);
    expect(await codeOf(promote(c, target, 'a:b'))).toMatch(
      /^ERR_ROLLOUT_INPUT: build ID "a:b": .*must not contain ":"/,
    );
    expect(await codeOf(promote(c, target, 'x'.repeat(600)))).toMatch(
      /^ERR_ROLLOUT_INPUT: build ID "x{57}\.\.\.": the build ID is 600 characters long/,
    );
    expect(await codeOf(promote(c, target, "v1' OR '1'='1"))).toMatch(/^ERR_ROLLOUT_INPUT/);
    expect(await codeOf(wake(c, target, { fromBuildId: v2, ratePerSecond: 0 }))).toMatch(
      /^ERR_ROLLOUT_INPUT: --rate 0/,
    );
    const unknown = { ...target, deploymentName: `unknown-${suffix}` };
    expect(await codeOf(rolloutStatus(c, unknown))).toMatch(
      /^ERR_ROLLOUT_REFUSED: no deployment "unknown-.*" \(namespace "[^"]+"\): no worker of it has polled yet/,
    );
    expect(await codeOf(promote(c, unknown, v1))).toMatch(/^ERR_ROLLOUT_REFUSED: no deployment/);
    expect(await codeOf(rollback(c, { ...target, deploymentName: 'a.b' }))).toMatch(
      /^ERR_ROLLOUT_INPUT: deployment "a.b"/,
    );
    expect((await describeDeployment(c, target)).currentBuildId).toBe(v1);
  });

  it('given the CLI, status prints JSON, a bad ramp exits 2 and a refused promote exits 1, each without a stack', async () => {
    const env = { TEMPORAL_ADDRESS: t.endpoints.temporalAddress, TEMPORAL_NAMESPACE: t.endpoints.temporalNamespace };
    const status = await homeostat(env, 'rollout', 'status', '--json', '--deployment', deploymentName);
    expect({ status: status.status, stderr: status.stderr }).toEqual({ status: 0, stderr: '' });
    const parsed = JSON.parse(status.stdout) as {
      currentBuildId: string;
      versions: { buildId: string; status: string }[];
    };
    expect(parsed.currentBuildId).toBe(v1);
    expect(parsed.versions.map((v) => v.buildId).sort()).toEqual([v1, v2].sort());

    const bad = await homeostat(env, 'rollout', 'ramp', '150', v2, '--deployment', deploymentName);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^homeostat rollout: ramp 150: a ramp is a percentage/);
    const refused = await homeostat(
      env,
      'rollout',
      'promote',
      `never-${suffix}`,
      '--deployment',
      deploymentName,
      '--skip-check',
    );
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/no worker of build "never-.*" has polled yet: start its workers first\n$/);
    for (const r of [bad, refused]) expect(r.stderr).not.toMatch(/\n\s+at /);
    expect((await describeDeployment(t.temporal, target)).currentBuildId).toBe(v1);

    // promote without a build: the newest version that is not Current; then wake and wait for v1 to drain.
    // (--skip-check: these stand-in workers run no homeostat compatibility check; the real check is
    // exercised on homeostat's workers in worker-versioning and live-upgrade.)
    const promoted = await homeostat(
      env,
      'rollout',
      'promote',
      '--skip-check',
      '--wake',
      '--wait-drained',
      '120',
      '--deployment',
      deploymentName,
    );
    expect(promoted.stdout).toMatch(
      new RegExp(
        `^promote: current ${v2} \\(was ${v1}\\)\nwoke 4 of 4 workflows onto ${v2} in [\\d.]+ s \\(1 needed a state query\\)\nwaiting .*\n${v1} drained`,
      ),
    );
    expect(promoted.status).toBe(0);
    const table = await homeostat(env, 'rollout', 'status', '--deployment', deploymentName);
    expect(table.stdout).toMatch(new RegExp(`^${v2} +Current +- +yes +\\d+ `, 'm'));
    expect(table.stdout).toMatch(new RegExp(`^${v1} +Drained +- +yes +0 +drained`, 'm'));
  });
});
