/**
 * `homeostat rollout wake`: after a promote, wakes every object workflow still pinned to an older
 * version so it continues as new onto the Current one at once instead of at its next drift timer.
 * Each gets homeostat's own `reconcile-requested` signal (reason `resync`), which wakes it between
 * passes; the object workflow then sees that its target version changed and continues as new.
 *
 * Why not Temporal's batch signal operation: it sends one payload to every workflow, and the signal
 * must name each workflow's own object (its handler ignores a request for another object). So this is
 * a client loop at a bounded rate (50 signals/s by default: 100,000 objects take about 33 minutes,
 * the same as a batch job at the server's default `worker.batcherRPS`).
 *
 * Cost per object: 1 signal (a billable action), the workflow task it causes (not billed), and the
 * continue-as-new (a "workflow started" action) that the drift timer would have caused anyway; the
 * new run's pass on the new version is the pass the object owed. The request each signal carries is
 * read from the run's first history events (not billed); only a run whose first events name no UID
 * (started by an API call before its first pass) costs a `state` query (1 action) as well.
 *
 * A pinned workflow that is not an object workflow (its input names no object of its ID) is skipped
 * and reported: it keeps its version from draining until it closes.
 */
import type { Client } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import {
  objectWorkflowType,
  type ObjectWorkflowInput,
  type ReconcileRequest,
  reconcileRequestedSignal,
  stateQuery,
  workflowIdFor,
} from '../definitions';
import { temporal } from '@temporalio/proto';
import {
  describeDeployment,
  type DeploymentDescription,
  type RolloutTarget,
  versionWorkflowTaskQueues,
  workflowTaskQueueType,
} from './deployment-description';
import { assertBuildId, assertDeploymentName, assertWorkflowType, versionSearchValue } from './deployment-version';
import { quoteShort, RolloutError } from './rollout-errors';

/** Options of {@link wake}. */
export interface WakeOptions {
  /** Wake the workflows pinned to this build; default: those pinned to any version but the Current one. */
  readonly fromBuildId?: string;
  /** Signals per second, at most 1000. @default 50 */
  readonly ratePerSecond?: number;
  /** Signals in flight at once. @default 8 */
  readonly concurrency?: number;
  /** The workflow type to wake. @default 'objectWorkflow' */
  readonly workflowType?: string;
  /** Called after each workflow (progress output). */
  readonly onProgress?: (done: number) => void;
  /** Stops the loop early (what was signalled stays signalled). */
  readonly signal?: AbortSignal;
  /** How long to wait for the latest routing to reach every task queue before waking. @default 60000 */
  readonly routingTimeoutMs?: number;
}

/** What {@link wake} did. */
export interface WakeResult {
  /** The visibility query that listed the workflows. */
  readonly query: string;
  /** The build the workflows were woken onto. */
  readonly currentBuildId: string;
  /**
   * Who said the routing had reached the task queues before the first signal: the server
   * (`routingConfigUpdateState` completed), or, when that flag was still in progress at the end of the
   * wait, each of the Current version's workflow task queues naming it Current.
   */
  readonly routingConfirmedBy: 'server' | 'task-queues';
  readonly listed: number;
  readonly signalled: number;
  /** `state` queries sent because a run's first events named no UID (1 billable action each). */
  readonly queried: number;
  /** Workflows left alone: closed meanwhile, or not an object workflow (their version cannot drain while they run). */
  readonly skipped: readonly { readonly workflowId: string; readonly reason: string }[];
  readonly failed: readonly { readonly workflowId: string; readonly error: string }[];
  readonly elapsedMs: number;
}

/**
 * Whether every workflow task queue of the Current version names that version Current itself (its
 * root partition's routing, from `DescribeTaskQueue`): false when one does not, or cannot be read.
 */
async function taskQueuesRouteTo(client: Client, d: DeploymentDescription, buildId: string): Promise<boolean> {
  try {
    const names = await versionWorkflowTaskQueues(client, d, buildId);
    if (names.length === 0) return false;
    for (const name of names) {
      const tq = await client.workflowService.describeTaskQueue({
        namespace: d.namespace,
        taskQueue: { name, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
        taskQueueType: workflowTaskQueueType,
      });
      const current = tq.versioningInfo?.currentDeploymentVersion;
      if (current?.deploymentName !== d.deploymentName || current.buildId !== buildId) return false;
    }
    return true;
  } catch {
    return false;
  }
}

/**
 * The deployment once its latest routing has reached every task queue partition. A workflow task
 * started before that still sees the old target, so a run woken then would not learn that its target
 * changed and would stay where it is until its next workflow task (its drift timer): wake waits
 * (describing at most once a second) first.
 *
 * The server's own flag (`routingConfigUpdateState`) can stay in progress long after the routing
 * arrived (temporalio/temporal#11842: the version's "propagation complete" signal is lost and the flag
 * never clears). So when the wait runs out, the task queues themselves are asked: when each names the
 * Current version, wake goes on and says the routing was `confirmedBy: 'task-queues'`; when one does
 * not, it refuses as before.
 */
async function routedEverywhere(
  client: Client,
  target: RolloutTarget,
  timeoutMs: number,
): Promise<{ d: DeploymentDescription; confirmedBy: WakeResult['routingConfirmedBy'] }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const d = await describeDeployment(client, target);
    if (d.routingUpdate !== 'in-progress') return { d, confirmedBy: 'server' };
    if (Date.now() + 1000 > deadline) {
      if (d.currentBuildId !== undefined && (await taskQueuesRouteTo(client, d, d.currentBuildId))) {
        return { d, confirmedBy: 'task-queues' };
      }
      throw new RolloutError(
        'ERR_ROLLOUT_REFUSED',
        `deployment ${quoteShort(d.deploymentName)}: its routing has not reached every task queue after ${Math.round(timeoutMs / 1000)} s: try wake again later`,
      );
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** The default of {@link WakeOptions.ratePerSecond}. */
export const defaultWakeRatePerSecond = 50;

function isNotFound(err: unknown): boolean {
  const e = err as { name?: unknown; code?: unknown };
  return e?.name === 'WorkflowNotFoundError' || e?.code === 5;
}

/** The request that wakes one workflow: its object and UID from the run's first events, or from its `state`. */
async function requestOf(
  client: Client,
  namespace: string,
  workflowId: string,
  runId: string,
): Promise<{ request?: ReconcileRequest; queried: boolean; reason?: string }> {
  const converter = client.options.loadedDataConverter;
  const res = await client.workflowService.getWorkflowExecutionHistory({
    namespace,
    execution: { workflowId, runId },
    maximumPageSize: 10,
  });
  let input: ObjectWorkflowInput | undefined;
  let uid: string | undefined;
  for (const event of res.history?.events ?? []) {
    const started = event.workflowExecutionStartedEventAttributes;
    if (started && !input) {
      input = await decodeFromPayloadsAtIndex<ObjectWorkflowInput>(converter, 0, started.input?.payloads);
      uid = input?.carried?.uid ?? input?.pending?.uid;
    }
    const signalled = event.workflowExecutionSignaledEventAttributes;
    if (!uid && signalled?.signalName === reconcileRequestedSignal.name) {
      uid = (await decodeFromPayloadsAtIndex<ReconcileRequest>(converter, 0, signalled.input?.payloads))?.uid;
    }
  }
  const ref = input?.ref;
  if (!ref || typeof ref.kind !== 'string' || workflowIdFor(ref) !== workflowId) {
    return { queried: false, reason: 'its input names no object of this ID: not an object workflow' };
  }
  let queried = false;
  if (!uid) {
    queried = true;
    uid = (await client.workflow.getHandle(workflowId, runId).query(stateQuery)).uid;
  }
  // A run that never observed its object (its observe keeps failing) is woken all the same, or its
  // version would never drain: an empty UID names no object, so the pass it causes re-reads the object
  // and blocks nothing a known UID would.
  return { queried, request: { ref, uid: uid ?? '', generation: 0, resourceVersion: '', reason: 'resync' } };
}

/**
 * Signals every object workflow pinned to an old version (or to `fromBuildId`) at a bounded rate, so
 * each continues as new onto the Current version now. Refused when there is no Current version or
 * `fromBuildId` is the Current one.
 */
export async function wake(client: Client, target: RolloutTarget, options: WakeOptions = {}): Promise<WakeResult> {
  assertDeploymentName(target.deploymentName);
  if (options.fromBuildId !== undefined) assertBuildId(options.fromBuildId);
  const workflowType = options.workflowType ?? objectWorkflowType;
  assertWorkflowType(workflowType);
  const rate = options.ratePerSecond ?? defaultWakeRatePerSecond;
  if (!Number.isFinite(rate) || rate <= 0 || rate > 1000) {
    throw new RolloutError(
      'ERR_ROLLOUT_INPUT',
      `--rate ${String(rate)}: signals per second, more than 0 and at most 1000`,
    );
  }
  const concurrency = Math.max(1, Math.min(64, Math.floor(options.concurrency ?? 8)));
  const { d, confirmedBy } = await routedEverywhere(client, target, options.routingTimeoutMs ?? 60_000);
  const current = d.currentBuildId;
  if (current === undefined) {
    throw new RolloutError(
      'ERR_ROLLOUT_REFUSED',
      `deployment ${quoteShort(d.deploymentName)} has no Current version to wake workflows onto`,
    );
  }
  if (options.fromBuildId === current) {
    throw new RolloutError(
      'ERR_ROLLOUT_REFUSED',
      `build ${quoteShort(current)} is the Current version: its workflows are where they should be`,
    );
  }
  const version = options.fromBuildId
    ? `TemporalWorkerDeploymentVersion = '${versionSearchValue(d.deploymentName, options.fromBuildId)}'`
    : `TemporalWorkerDeployment = '${d.deploymentName}' AND TemporalWorkerDeploymentVersion != '${versionSearchValue(d.deploymentName, current)}'`;
  const query = `WorkflowType = '${workflowType}' AND ExecutionStatus = 'Running' AND TemporalWorkflowVersioningBehavior = 'Pinned' AND ${version}`;

  const started = Date.now();
  let listed = 0;
  let signalled = 0;
  let queried = 0;
  const skipped: { workflowId: string; reason: string }[] = [];
  const failed: { workflowId: string; error: string }[] = [];
  const inFlight = new Set<Promise<void>>();
  const one = async (workflowId: string, runId: string): Promise<void> => {
    try {
      const found = await requestOf(client, target.namespace, workflowId, runId);
      if (found.queried) queried++;
      if (!found.request) {
        skipped.push({ workflowId, reason: found.reason ?? 'no request' });
        return;
      }
      // To the run listed: a run that continued as new meanwhile is on its way already.
      await client.workflow.getHandle(workflowId, runId).signal(reconcileRequestedSignal, found.request);
      signalled++;
    } catch (err) {
      if (isNotFound(err)) skipped.push({ workflowId, reason: 'it closed meanwhile (continued as new or completed)' });
      else failed.push({ workflowId, error: err instanceof Error ? err.message : String(err) });
    } finally {
      options.onProgress?.(signalled + skipped.length + failed.length);
    }
  };
  for await (const wf of client.workflow.list({ query })) {
    if (options.signal?.aborted) break;
    // The n-th workflow starts no earlier than n / rate seconds after the first: a bounded rate.
    const wait = started + (listed * 1000) / rate - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    while (inFlight.size >= concurrency) await Promise.race(inFlight);
    listed++;
    const p: Promise<void> = one(wf.workflowId, wf.runId).finally(() => inFlight.delete(p));
    inFlight.add(p);
  }
  await Promise.all(inFlight);
  return {
    query,
    currentBuildId: current,
    routingConfirmedBy: confirmedBy,
    listed,
    signalled,
    queried,
    skipped,
    failed,
    elapsedMs: Date.now() - started,
  };
}
