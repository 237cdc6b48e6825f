/**
 * `homeostat rollout status`: a deployment's versions as Temporal sees them — status, ramp, drainage
 * (with when the server last checked it), whether workers of each version poll, and how many running
 * workflows each version holds (one visibility count per version; GROUP BY cannot group by version).
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { objectWorkflowType } from '../definitions';
import {
  type DeploymentDescription,
  describeDeployment,
  type RolloutTarget,
  type VersionSummary,
  versionWorkflowTaskQueues,
  workflowTaskQueueType,
} from './deployment-description';
import { assertDeploymentName, assertWorkflowType, versionSearchValue } from './deployment-version';

/** One version in {@link RolloutStatus}. */
export interface VersionStatus extends VersionSummary {
  /** The share of new runs it takes, when Ramping. */
  readonly rampPercentage?: number;
  /**
   * Whether a worker of this version polled one of its task queues lately (within the server's
   * `matching.PollerHistoryTTL`, 5 minutes by default); undefined when the queues could not be described.
   */
  readonly pollers?: boolean;
  /** Running workflows whose version is this one (visibility: a few seconds behind). */
  readonly runningWorkflows: number;
}

/** The answer of {@link rolloutStatus}. */
export interface RolloutStatus {
  readonly namespace: string;
  readonly deploymentName: string;
  readonly currentBuildId?: string;
  readonly ramping?: { readonly buildId: string; readonly percentage: number };
  /** Whether every task queue partition has the latest routing yet. */
  readonly routingUpdate?: 'in-progress' | 'completed';
  readonly lastModifierIdentity?: string;
  readonly managerIdentity?: string;
  /** Every version, newest first. */
  readonly versions: readonly VersionStatus[];
  /** Running workflows of the workflow type on no version (started before versioning, or by unversioned workers). */
  readonly unversionedWorkflows: number;
}

/** Options of {@link rolloutStatus}. */
export interface RolloutStatusOptions {
  /** The workflow type counted as unversioned. @default 'objectWorkflow' */
  readonly workflowType?: string;
}

/** The visibility query for the running workflows of one version. */
export function runningOnVersionQuery(deploymentName: string, buildId: string): string {
  return `TemporalWorkerDeploymentVersion = '${versionSearchValue(deploymentName, buildId)}' AND ExecutionStatus = 'Running'`;
}

/** The build IDs that have a poller on the version's workflow task queues, by build; undefined per build on failure. */
async function pollersByBuild(client: Client, d: DeploymentDescription): Promise<Map<string, boolean | undefined>> {
  const queues = new Map<string, Set<string>>();
  const result = new Map<string, boolean | undefined>();
  for (const v of d.versions) {
    try {
      queues.set(v.buildId, new Set(await versionWorkflowTaskQueues(client, d, v.buildId)));
      result.set(v.buildId, false);
    } catch {
      result.set(v.buildId, undefined);
    }
  }
  const polling = new Set<string>();
  const failedQueues = new Set<string>();
  for (const name of new Set([...queues.values()].flatMap((s) => [...s]))) {
    try {
      const res = await client.workflowService.describeTaskQueue({
        namespace: d.namespace,
        taskQueue: { name, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
        taskQueueType: workflowTaskQueueType,
      });
      for (const p of res.pollers ?? []) {
        const o = p.deploymentOptions;
        if (o?.deploymentName === d.deploymentName && o.buildId) polling.add(`${name}\n${o.buildId}`);
      }
    } catch {
      failedQueues.add(name);
    }
  }
  for (const [buildId, names] of queues) {
    const any = [...names].some((n) => polling.has(`${n}\n${buildId}`));
    result.set(buildId, any ? true : [...names].some((n) => failedQueues.has(n)) ? undefined : false);
  }
  return result;
}

/** Reads the deployment's versions, their pollers and the running workflows each holds. */
export async function rolloutStatus(
  client: Client,
  target: RolloutTarget,
  options: RolloutStatusOptions = {},
): Promise<RolloutStatus> {
  assertDeploymentName(target.deploymentName);
  const d = await describeDeployment(client, target);
  const pollers = await pollersByBuild(client, d);
  const versions: VersionStatus[] = [];
  for (const v of d.versions) {
    const { count } = await client.workflow.count(runningOnVersionQuery(d.deploymentName, v.buildId));
    const polled = pollers.get(v.buildId);
    versions.push({
      ...v,
      ...(d.ramping?.buildId === v.buildId ? { rampPercentage: d.ramping.percentage } : {}),
      ...(polled !== undefined ? { pollers: polled } : {}),
      runningWorkflows: count,
    });
  }
  const workflowType = options.workflowType ?? objectWorkflowType;
  assertWorkflowType(workflowType);
  const { count: unversionedWorkflows } = await client.workflow.count(
    `WorkflowType = '${workflowType}' AND ExecutionStatus = 'Running' AND TemporalWorkerDeploymentVersion IS NULL`,
  );
  const { versions: _summaries, conflictToken: _token, ...rest } = d;
  return { ...rest, versions, unversionedWorkflows };
}
