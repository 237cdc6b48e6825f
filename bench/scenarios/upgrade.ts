/**
 * Scenario 8, upgrade: a live operator upgrade over Temporal's Worker Deployment Versioning, as
 * `homeostat rollout` does it. Objects Ready under operator version 1 (its worker a versioned process);
 * version 2 (one step more) starts beside it and is promoted after the compatibility check: every
 * object moves at its next drift check. Then version 3 (one step more again) is promoted and woken
 * (`rollout promote --wake`): every object moves at once. For each move, the time from the promote
 * until every object was seen Ready under the new version's plan (its new step's condition), the
 * Temporal actions per object it cost (every run's history, from the promote to the last move, plus
 * the wake's billable queries), the time until the old version was drained, and the workflow tasks
 * that failed.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { searchAttributeKeys } from '../../core/definitions';
import { driftCheckAnnotation } from '../../core/plan';
import {
  type CompatibilityGate,
  describeDeployment,
  promote,
  type RolloutTarget,
  waitDrained,
  wake,
} from '../../core/rollout';
import { runCompatibilityCheck } from '../../workers/compatibility-check';
import { type Child, spawnChild } from '../children/spawn';
import type { WorkerChildOptions } from '../children/worker-child';
import { historyCost } from '../history-cost';
import { createNamespace, createObject, forEachLimited, ReadyWatch } from '../objects';
import type { BenchUpgradeVersion } from '../reconciler/plan';
import { round, summarize, type Summary } from '../stats';
import { type BenchContext, startBridge } from '../systems';

/** One promote's figures. */
export interface UpgradeMove {
  readonly from: BenchUpgradeVersion;
  readonly to: BenchUpgradeVersion;
  /** `drift`: objects move at their next drift check; `wake`: `rollout promote --wake`. */
  readonly how: 'drift' | 'wake';
  /** The promote call, its compatibility check included. */
  readonly promoteSeconds: number;
  /** Promote → the last object seen Ready under the new version's plan. */
  readonly allMovedSeconds: number;
  /** Each object's promote → Ready under the new plan. */
  readonly perObject: Summary;
  /** Temporal actions per object from the promote to the last move (wake's signals and queries included). */
  readonly actionsPerObject: number;
  /** History events per object in the same window. */
  readonly eventsPerObject: number;
  /** Promote → the old version reported drained by the server. */
  readonly drainedSeconds: number;
  /** The wake: workflows signalled, billable `state` queries, failures, its own duration. */
  readonly wake?: { signalled: number; queried: number; failed: number; seconds: number; ratePerSecond: number };
}

/** The result of {@link upgradeScenario}. */
export interface UpgradeResult {
  readonly objects: number;
  /** The objects' drift-check interval (their annotation). */
  readonly driftInterval: string;
  readonly moves: readonly UpgradeMove[];
  /** Workflow tasks that failed in every run of every object (a racing signal's hand-back apart). */
  readonly workflowTaskFailures: number;
  /** Tasks the server handed back because a signal arrived as the run continued as new (nothing lost). */
  readonly handedBack: number;
  /** Object workflow runs in all (continue-as-new makes a run per move). */
  readonly runs: number;
}

/** The condition that shows an object's last pass ran version `v`'s plan (its added step's). */
const conditionOf: Record<BenchUpgradeVersion, string> = { 1: 'ThirdReady', 2: 'FourthReady', 3: 'FifthReady' };
/** How fast the wake signals (the rollout command's `--rate`). */
const wakeRatePerSecond = 100;

type History = readonly temporal.api.history.v1.IHistoryEvent[];

/** Every run of every object workflow of `namespace`, closed runs (continued as new) included. */
async function histories(client: Client, namespace: string): Promise<History[]> {
  const out: History[] = [];
  const query = `${searchAttributeKeys.namespace.name} = '${namespace}'`;
  for await (const wf of client.workflow.list({ query })) {
    out.push((await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory()).events ?? []);
  }
  return out;
}

/** The events of `all` between two wall-clock times. */
function eventsBetween(all: readonly History[], fromMs: number, toMs: number): temporal.api.history.v1.IHistoryEvent[] {
  return all.flatMap((events) =>
    events.filter((e) => {
      const ms = Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);
      return ms >= fromMs && ms <= toMs;
    }),
  );
}

/** Runs the upgrade scenario on `objects` objects whose drift checks come every `driftInterval`. */
export async function upgradeScenario(
  ctx: BenchContext,
  objects: number,
  driftInterval: string,
): Promise<UpgradeResult> {
  const suffix = randomBytes(3).toString('hex');
  const namespace = `${ctx.runId}-upgrade`;
  const taskQueue = `bench-upgrade-${suffix}`;
  const target: RolloutTarget = { namespace: ctx.temporalNamespace, deploymentName: `bench-upgrade-${suffix}` };
  const buildOf = (v: BenchUpgradeVersion): string => `bench-v${v}-${suffix}`;
  const gate: CompatibilityGate = (client, request) => runCompatibilityCheck(client, { ...request, taskQueue });
  const workers = new Map<BenchUpgradeVersion, Child>();
  const startVersion = async (version: BenchUpgradeVersion): Promise<void> => {
    const child = spawnChild('worker-child.ts', {
      kubeconfig: ctx.kubeconfig,
      temporalAddress: ctx.temporalAddress,
      temporalNamespace: ctx.temporalNamespace,
      taskQueue,
      bundlePath: ctx.homeostatBundlePath,
      identity: `bench-upgrade-v${version}`,
      upgrade: { version, deploymentName: target.deploymentName, buildId: buildOf(version) },
    } satisfies WorkerChildOptions);
    workers.set(version, child);
    await child.next('ready', 120_000);
    // The server knows a version once one of its workers has polled: a promote before that is refused.
    const known = Date.now() + 120_000;
    while (!(await describeDeployment(ctx.temporal, target)).versions.some((v) => v.buildId === buildOf(version))) {
      if (Date.now() > known) throw new Error(`version ${buildOf(version)} never polled`);
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  const names = Array.from({ length: objects }, (_, i) => `up-${i}`);
  await createNamespace(ctx.kube, namespace);
  const watch = new ReadyWatch(ctx.kube, namespace);
  await watch.start();
  // The deployment's first version becomes Current as its worker starts.
  await startVersion(1);
  const bridge = await startBridge(ctx, namespace, taskQueue);
  const windows: { move: Omit<UpgradeMove, 'actionsPerObject' | 'eventsPerObject'>; fromMs: number; toMs: number }[] =
    [];
  try {
    ctx.progress(`upgrade: ${objects} objects on operator version 1`);
    const ready = names.map((n) => watch.waitReady(n, 1, 900_000));
    await forEachLimited(objects, 64, (i) =>
      createObject(ctx.kube, namespace, names[i]!, {}, { annotations: { [driftCheckAnnotation]: driftInterval } }).then(
        () => {},
      ),
    );
    await Promise.all(ready);

    const move = async (from: BenchUpgradeVersion, to: BenchUpgradeVersion, how: 'drift' | 'wake'): Promise<void> => {
      await startVersion(to);
      ctx.progress(`upgrade: promoting version ${to}${how === 'wake' ? ' with wake' : ''}`);
      const fromMs = Date.now();
      const t0 = performance.now();
      const moved = names.map((n) => watch.waitCondition(n, conditionOf[to], 1_800_000));
      moved.forEach((p) => p.catch(() => {}));
      await promote(ctx.temporal, target, buildOf(to), { gate });
      const promoteSeconds = round((performance.now() - t0) / 1000, 2);
      const woken =
        how === 'wake'
          ? await wake(ctx.temporal, target, { ratePerSecond: wakeRatePerSecond, routingTimeoutMs: 300_000 })
          : undefined;
      const times = (await Promise.all(moved)).map((at) => at - t0);
      const toMs = Date.now();
      const allMovedSeconds = round(Math.max(...times) / 1000, 2);
      await waitDrained(ctx.temporal, target, buildOf(from), 900_000);
      const drainedSeconds = round((performance.now() - t0) / 1000, 2);
      await workers.get(from)?.stop();
      workers.delete(from);
      windows.push({
        fromMs,
        toMs,
        move: {
          from,
          to,
          how,
          promoteSeconds,
          allMovedSeconds,
          perObject: summarize(times),
          drainedSeconds,
          ...(woken
            ? {
                wake: {
                  signalled: woken.signalled,
                  queried: woken.queried,
                  failed: woken.failed.length,
                  seconds: round(woken.elapsedMs / 1000, 2),
                  ratePerSecond: wakeRatePerSecond,
                },
              }
            : {}),
        },
      });
    };
    await move(1, 2, 'drift');
    await move(2, 3, 'wake');
  } finally {
    await bridge.stop(5_000).catch(() => {});
    await Promise.allSettled([...workers.values()].map((w) => w.stop()));
    watch.stop();
  }

  ctx.progress('upgrade: counting from every history');
  const all = await histories(ctx.temporal, namespace);
  const failed = all.flat().filter((e) => e.workflowTaskFailedEventAttributes);
  const handedBack = failed.filter(
    (e) =>
      e.workflowTaskFailedEventAttributes?.cause ===
      temporal.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND,
  ).length;
  const moves = windows.map(({ move, fromMs, toMs }) => {
    const cost = historyCost(eventsBetween(all, fromMs, toMs));
    // The wake's `state` queries are billed as actions; its signals are already in the histories.
    const actions = cost.actions + (move.wake?.queried ?? 0);
    return {
      ...move,
      actionsPerObject: round(actions / objects, 2),
      eventsPerObject: round(cost.events / objects, 2),
    };
  });
  return {
    objects,
    driftInterval,
    moves,
    workflowTaskFailures: failed.length - handedBack,
    handedBack,
    runs: all.length,
  };
}
