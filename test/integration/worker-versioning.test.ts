/**
 * Worker Deployment Versioning on the real stack: an operator's v1 and v2 as two versions of one
 * deployment on one task queue. Objects Ready on v1 move to v2 after it is made Current and they wake:
 * each continues as new onto v2 between passes, runs v2's plan there (its new step's condition in
 * status), no step of one version runs on the other's worker, and no workflow task fails. A v2 that
 * cannot read v1's carried state is caught by the compatibility check before any promote.
 */
import { Worker } from '@temporalio/worker';
import { NativeConnection } from '@temporalio/worker';
import { temporal as temporalProto, type temporal } from '@temporalio/proto';
import pino from 'pino';
import { z } from 'zod';
import { createActivities } from '../../activities/create-activities';
import { createCompatibilityActivities } from '../../activities/compatibility-check';
import { checkCarriedStates } from '../../core/carried-state';
import {
  objectWorkflowStartOptions,
  objectWorkflowType,
  reconcileNowUpdate,
  reconcileRequestedSignal,
  stateQuery,
  workflowIdFor,
  type ObjectRef,
} from '../../core/definitions';
import type { Operator } from '../../core/operator';
import { stepConditionType } from '../../core/status';
import { defineOperator, definePlan, defineReconciler } from '../../reconcilers';
import { runCompatibilityCheck } from '../../workers/compatibility-check';
import { establishVersionRouting } from '../../workers/first-version';
import { bundleObjectWorkflows, createHomeostatWorker, installRuntime } from '../../workers/create-worker';
import { eventually } from '../support/eventually';
import { randomSuffix, useStack } from '../support/harness';
import { installOperatorCrds } from '../support/homeostat';

const group = 'versioning.test.homeostat.dev';
const plural = 'gadgets';
const objects = 3;

/** The Gadget operator with the given steps (each a regular activity, so its worker is in history). */
function gadgetOperator(version: string, steps: readonly string[], maxPassesPerRun?: number): Operator {
  const plan = definePlan({
    group,
    version: 'v1',
    kind: 'Gadget',
    plural,
    scope: 'Namespaced',
    steps: steps.map((name) => ({ name, execution: 'regular' as const })),
    ...(maxPassesPerRun !== undefined ? { maxPassesPerRun } : {}),
  });
  const reconciler = defineReconciler({
    plan,
    schema: z.object({ size: z.number().int() }),
    steps: Object.fromEntries(steps.map((name) => [name, async () => ({ message: `${name} by ${version}` })])),
  });
  return defineOperator({ name: 'gadgets', version, reconcilers: [reconciler] });
}

const v1 = gadgetOperator('1.0.0', ['alpha', 'beta']);
/** v2 adds `gamma` and removes `beta`. */
const v2 = gadgetOperator('2.0.0', ['alpha', 'gamma']);

interface Gadget {
  metadata: { name: string; uid: string; generation: number; resourceVersion: string };
  status?: { phase?: string; conditions?: { type: string; status: string }[] };
}

describe('worker versioning: an operator upgrade moves every object onto the new version between passes', () => {
  const t = useStack();
  const taskQueue = `versioning-${randomSuffix()}`;
  const deploymentName = `gadgets-${taskQueue}`;
  const logger = pino({ name: 'versioning-test', level: 'warn' });
  let connection: NativeConnection;
  const running: Promise<void>[] = [];
  const workers: Worker[] = [];

  beforeAll(async () => {
    installRuntime(logger);
    await installOperatorCrds(t, v1);
    connection = await NativeConnection.connect({ address: t.endpoints.temporalAddress });
    t.defer(async () => {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await Promise.allSettled(running);
      await connection.close();
    });
  }, 120_000);

  /** Starts a versioned worker (manual rollout: only the deployment's first version makes itself Current). */
  const startWorker = async (operator: Operator, buildId: string): Promise<void> => {
    const worker = await createHomeostatWorker({
      connection,
      namespace: t.endpoints.temporalNamespace,
      taskQueue,
      workflowBundle: await bundleObjectWorkflows(),
      operator,
      kc: t.kc,
      logger,
      identity: `worker-${buildId}`,
      versioning: { deploymentName, buildId, rollout: 'manual' },
    });
    workers.push(worker);
    running.push(worker.run());
  };

  const read = async (name: string): Promise<Gadget> =>
    (await t.custom.getNamespacedCustomObject({
      group,
      version: 'v1',
      namespace: t.namespace,
      plural,
      name,
    })) as Gadget;
  const hasCondition = (g: Gadget, step: string): boolean =>
    (g.status?.conditions ?? []).some((c) => c.type === stepConditionType(step) && c.status === 'True');
  const refOf = (name: string): ObjectRef => ({ group, version: 'v1', kind: 'Gadget', namespace: t.namespace, name });
  const describeDeployment = () =>
    t.connection.workflowService.describeWorkerDeployment({
      namespace: t.endpoints.temporalNamespace,
      deploymentName,
    });

  /** Makes `buildId` Current through Temporal's API, as `homeostat rollout promote` does. */
  const promote = async (buildId: string): Promise<void> => {
    await eventually(
      `${buildId} made current`,
      async () => {
        const { conflictToken } = await describeDeployment();
        await t.connection.workflowService.setWorkerDeploymentCurrentVersion({
          namespace: t.endpoints.temporalNamespace,
          deploymentName,
          buildId,
          conflictToken,
          identity: 'worker-versioning-test',
        });
        return (await describeDeployment()).workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId;
      },
      (current) => current === buildId,
      120_000,
    );
    // The routing reaches the task queue's partitions asynchronously: a wake before that is a pass on
    // the old version (the run learns of the new one from a later workflow task).
    await eventually(
      'the new routing propagated',
      async () => (await describeDeployment()).workerDeploymentInfo?.routingConfigUpdateState,
      (state) => state === temporalProto.api.enums.v1.RoutingConfigUpdateState.ROUTING_CONFIG_UPDATE_STATE_COMPLETED,
      120_000,
    );
  };

  /** Every run's history of a workflow (visibility lists them; the newest may lag). */
  const histories = async (workflowId: string): Promise<temporal.api.history.v1.IHistory[]> => {
    const runs: string[] = [];
    for await (const wf of t.temporal.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs.push(wf.runId);
    return Promise.all(runs.map((runId) => t.temporal.workflow.getHandle(workflowId, runId).fetchHistory()));
  };

  const names = Array.from({ length: objects }, (_, i) => `gadget-${i}`);

  it('given objects Ready on v1, after v2 is made Current and they wake, each runs v2 on the v2 worker only and no task fails', async () => {
    await startWorker(v1, 'v1');
    expect((await describeDeployment()).workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId).toBe(
      'v1',
    );
    for (const name of names) {
      const created = (await t.custom.createNamespacedCustomObject({
        group,
        version: 'v1',
        namespace: t.namespace,
        plural,
        body: { apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name }, spec: { size: 1 } },
      })) as Gadget;
      const ref = refOf(name);
      const start = objectWorkflowStartOptions(ref, taskQueue);
      await t.temporal.workflow.start(objectWorkflowType, {
        ...start,
        args: [
          {
            ...start.args[0],
            pending: {
              ref,
              uid: created.metadata.uid,
              generation: created.metadata.generation,
              resourceVersion: created.metadata.resourceVersion,
              reason: 'added',
            },
          },
        ],
      });
    }
    for (const name of names) {
      await eventually(
        `${name} Ready on v1`,
        () => read(name),
        (g) => g.status?.phase === 'Ready' && hasCondition(g, 'beta'),
        120_000,
      );
    }

    await startWorker(v2, 'v2');
    await promote('v2');
    // Wake every object (what `homeostat rollout promote --wake` does): its next workflow task learns of v2.
    for (const name of names) {
      const g = await read(name);
      await t.temporal.workflow.getHandle(workflowIdFor(refOf(name))).signal(reconcileRequestedSignal, {
        ref: refOf(name),
        uid: g.metadata.uid,
        generation: g.metadata.generation,
        resourceVersion: g.metadata.resourceVersion,
        reason: 'resync',
      });
    }

    for (const name of names) {
      const workflowId = workflowIdFor(refOf(name));
      await eventually(
        `${name} on v2`,
        async () =>
          (await t.temporal.workflow.getHandle(workflowId).describe()).raw.workflowExecutionInfo?.versioningInfo,
        (info) => info?.deploymentVersion?.buildId === 'v2',
        120_000,
      );
      await eventually(
        `${name} has v2's gamma condition`,
        () => read(name),
        (g) => hasCondition(g, 'gamma'),
        120_000,
      );
    }

    for (const name of names) {
      const workflowId = workflowIdFor(refOf(name));
      const all = await eventually(
        `${name}'s runs listed`,
        () => histories(workflowId),
        (h) => h.length >= 2,
        60_000,
      );
      const events = all.flatMap((h) => h.events ?? []);
      // Each started event names its scheduled event, by ID within its own run's history.
      const ranBy = all.flatMap((h) => {
        const scheduled = new Map(
          (h.events ?? [])
            .filter((e) => e.activityTaskScheduledEventAttributes)
            .map((e) => [String(e.eventId), e.activityTaskScheduledEventAttributes!.activityType!.name!]),
        );
        return (h.events ?? [])
          .filter((e) => e.activityTaskStartedEventAttributes)
          .map((e) => ({
            step: scheduled.get(String(e.activityTaskStartedEventAttributes!.scheduledEventId))?.split('/').pop(),
            identity: e.activityTaskStartedEventAttributes!.identity,
          }));
      });
      expect(ranBy.filter((r) => r.step === 'beta').every((r) => r.identity === 'worker-v1')).toBe(true);
      expect(ranBy.filter((r) => r.step === 'gamma').every((r) => r.identity === 'worker-v2')).toBe(true);
      expect(ranBy.some((r) => r.step === 'gamma') && ranBy.some((r) => r.step === 'beta')).toBe(true);
      expect(events.filter((e) => e.workflowTaskFailedEventAttributes)).toEqual([]);
    }
  }, 600_000);

  it('given a v2 whose reader refuses v1 envelopes, the compatibility check reports every object before any promote', async () => {
    // A candidate build whose carried-state reader reads only a format 2 (the real reader, other formats).
    const strict = await Worker.create({
      connection,
      namespace: t.endpoints.temporalNamespace,
      taskQueue,
      workflowBundle: await bundleObjectWorkflows(),
      activities: {
        ...createActivities({ kc: t.kc, operator: v2, logger }),
        ...createCompatibilityActivities((envelopes) => checkCarriedStates(envelopes, [2])),
      },
      identity: 'worker-v3-strict',
      workerDeploymentOptions: {
        version: { deploymentName, buildId: 'v3-strict' },
        useWorkerVersioning: true,
        defaultVersioningBehavior: 'PINNED',
      },
    });
    workers.push(strict);
    running.push(strict.run());
    await eventually(
      'the strict version polls the task queue',
      async () =>
        (
          await t.connection.workflowService.describeWorkerDeploymentVersion({
            namespace: t.endpoints.temporalNamespace,
            deploymentVersion: { deploymentName, buildId: 'v3-strict' },
          })
        ).versionTaskQueues?.map((q) => q.name),
      (queues) => queues?.includes(taskQueue) === true,
      60_000,
    );
    // The objects' runs on v2 are visible as such (visibility is eventually consistent).
    await eventually(
      'the v2 runs listed by version',
      () =>
        t.temporal.workflow.count(
          `TemporalWorkerDeploymentVersion = '${deploymentName}:v2' AND ExecutionStatus = 'Running' AND WorkflowType = '${objectWorkflowType}'`,
        ),
      (c) => c.count === objects,
      60_000,
    );

    const report = await runCompatibilityCheck(t.temporal, {
      deploymentName,
      candidateBuildId: 'v3-strict',
      currentBuildId: 'v2',
      taskQueue,
      timeout: '5 minutes',
    });
    expect(report.checked).toBe(objects);
    expect(report.incompatible.map((i) => i.workflowId).sort()).toEqual(
      names.map((n) => workflowIdFor(refOf(n))).sort(),
    );
    expect(report.incompatible[0]!.error).toMatch(/format: format 1 is not one this build reads/);

    const compatible = await runCompatibilityCheck(t.temporal, {
      deploymentName,
      candidateBuildId: 'v2',
      currentBuildId: 'v2',
      taskQueue,
      timeout: '5 minutes',
    });
    expect(compatible).toEqual({ checked: objects, incompatible: [] });
    // Nothing was promoted: v2 is still Current.
    expect((await describeDeployment()).workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId).toBe(
      'v2',
    );
  }, 300_000);

  it('given v3 promoted, a reconcile-now update that wakes an object is served by a pass before the object moves, not lost', async () => {
    await startWorker(v2, 'v3');
    await promote('v3');
    // The update's workflow task learns of v3: the pass it waits for runs first (on v2), then the run moves.
    const outcomes = await Promise.all(
      names.map((name) =>
        t.temporal.workflow
          .getHandle(workflowIdFor(refOf(name)))
          .executeUpdate(reconcileNowUpdate, { args: [{ ref: refOf(name) }] }),
      ),
    );
    expect(outcomes.map((o) => o.result)).toEqual(names.map(() => 'ready'));
    for (const name of names) {
      await eventually(
        `${name} on v3`,
        async () =>
          (await t.temporal.workflow.getHandle(workflowIdFor(refOf(name))).describe()).raw.workflowExecutionInfo
            ?.versioningInfo,
        (info) => info?.deploymentVersion?.buildId === 'v3',
        120_000,
      );
    }
  }, 300_000);

  it('given workers of one new deployment starting together, one makes its version Current and the others agree; a later build waits unless auto', async () => {
    const queue = `versioning-race-${randomSuffix()}`;
    const racing = `gadgets-${queue}`;
    // What createHomeostatWorker runs before its worker polls (one process cannot hold two workers of one
    // build on one queue, so the race is run on the routing step itself, as separate processes would).
    const start = (buildId: string, rollout: 'manual' | 'auto') =>
      establishVersionRouting({
        workflowService: t.connection.workflowService,
        namespace: t.endpoints.temporalNamespace,
        version: { deploymentName: racing, buildId },
        rollout,
        identity: `racer-${randomSuffix()}`,
        logger,
      });
    const current = async () =>
      (
        await t.connection.workflowService.describeWorkerDeployment({
          namespace: t.endpoints.temporalNamespace,
          deploymentName: racing,
        })
      ).workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId;
    const outcomes = await Promise.all([start('b1', 'manual'), start('b1', 'manual'), start('b1', 'manual')]);
    expect(outcomes.filter((o) => o === 'made-current').length).toBeGreaterThanOrEqual(1);
    expect(outcomes.every((o) => o === 'made-current' || o === 'current')).toBe(true);
    expect(await current()).toBe('b1');
    expect(await start('b2', 'manual')).toBe('waiting');
    expect(await current()).toBe('b1');
    expect(await start('b3', 'auto')).toBe('made-current');
    expect(await current()).toBe('b3');
  }, 120_000);

  it('given versioning turned off, an unversioned worker reconciles and continues as new (AUTO_UPGRADE is ignored)', async () => {
    const queue = `unversioned-${randomSuffix()}`;
    const worker = await createHomeostatWorker({
      connection,
      namespace: t.endpoints.temporalNamespace,
      taskQueue: queue,
      workflowBundle: await bundleObjectWorkflows(),
      operator: gadgetOperator('1.0.0', ['alpha', 'beta'], 1),
      kc: t.kc,
      logger,
      versioning: false,
    });
    workers.push(worker);
    running.push(worker.run());
    const name = 'unversioned-gadget';
    const created = (await t.custom.createNamespacedCustomObject({
      group,
      version: 'v1',
      namespace: t.namespace,
      plural,
      body: { apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name }, spec: { size: 1 } },
    })) as Gadget;
    const ref = refOf(name);
    const request = {
      ref,
      uid: created.metadata.uid,
      generation: created.metadata.generation,
      resourceVersion: created.metadata.resourceVersion,
      reason: 'added' as const,
    };
    const start = objectWorkflowStartOptions(ref, queue);
    await t.temporal.workflow.start(objectWorkflowType, { ...start, args: [{ ...start.args[0], pending: request }] });
    await eventually(
      `${name} Ready`,
      () => read(name),
      (g) => g.status?.phase === 'Ready',
      120_000,
    );
    // One pass per run: the pass continued as new; a second request is served by the next run.
    const handle = t.temporal.workflow.getHandle(workflowIdFor(ref));
    await handle.signal(reconcileRequestedSignal, { ...request, reason: 'resync' });
    const state = await eventually(
      'two passes',
      () => handle.query(stateQuery),
      (st) => st.passes >= 2,
      120_000,
    );
    expect(state.run).toBeGreaterThanOrEqual(2);
    const info = (await handle.describe()).raw.workflowExecutionInfo?.versioningInfo;
    expect(info?.deploymentVersion ?? undefined).toBeUndefined();
  }, 300_000);
});
