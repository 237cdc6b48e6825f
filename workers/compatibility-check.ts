/**
 * The client side of `homeostat rollout`'s compatibility gate: before a candidate version is ramped or
 * promoted, its workers read the carried-state envelope of every object workflow running on the
 * current version (`compatibilityCheckWorkflow`, pinned to the candidate). A candidate that cannot read
 * one would fail that object's workflow tasks once it moved there; the gate reports it first.
 */
import type { Client } from '@temporalio/client';
import { compatibilityCheckWorkflowType, type CompatibilityReport } from '../core/carried-state';
import { defaultTaskQueue } from '../core/definitions';

/** Options of {@link runCompatibilityCheck}. */
export interface CompatibilityCheckOptions {
  /** Must be the client's namespace (a check runs where the workers are). @default the client's */
  readonly namespace?: string;
  readonly deploymentName: string;
  /** The version to be ramped or promoted: its workers run the check. */
  readonly candidateBuildId: string;
  /** The deployment's Current version: its running object workflows are checked. */
  readonly currentBuildId: string;
  /** The most workflows checked. @default 1000 */
  readonly limit?: number;
  /** The candidate workers' task queue. @default 'homeostat' */
  readonly taskQueue?: string;
  /** How long the check may run once started. @default '10 minutes' */
  readonly timeout?: string;
  /** How long to wait for the candidate version to be known on the task queue. @default 60000 */
  readonly pollerWaitMs?: number;
}

/**
 * Runs the compatibility check on the candidate's workers and returns how many envelopes were read and
 * which ones the candidate cannot read (`incompatible`: empty when the promote is safe).
 *
 * @throws when the namespace is not the client's, no worker of the candidate version has polled the
 *   task queue, or the check workflow fails or times out.
 */
export async function runCompatibilityCheck(
  client: Client,
  options: CompatibilityCheckOptions,
): Promise<CompatibilityReport> {
  if (options.namespace !== undefined && options.namespace !== client.options.namespace) {
    throw new Error(
      `the compatibility check runs in the client's namespace ${client.options.namespace}, not ${options.namespace}`,
    );
  }
  const candidate = { deploymentName: options.deploymentName, buildId: options.candidateBuildId };
  const taskQueue = options.taskQueue ?? defaultTaskQueue;
  const start = () =>
    client.workflow.start(compatibilityCheckWorkflowType, {
      workflowId: `homeostat-compatibility-check/${options.deploymentName}/${options.candidateBuildId}/${Date.now()}`,
      taskQueue,
      args: [
        {
          currentVersion: { deploymentName: options.deploymentName, buildId: options.currentBuildId },
          limit: options.limit ?? 1000,
        },
      ],
      versioningOverride: { pinnedTo: candidate },
      workflowExecutionTimeout: options.timeout ?? '10 minutes',
      staticSummary: `Can ${candidate.buildId} read the carried state of ${options.currentBuildId}'s object workflows?`,
    });
  // Temporal refuses a run pinned to a version until the version's registration on the task queue has
  // propagated (seconds after its first poll): retried for a while, then reported plainly.
  const notPolling = (err: unknown): boolean =>
    /is not present in task queue/.test(String((err as { cause?: unknown }).cause ?? err));
  const deadline = Date.now() + (options.pollerWaitMs ?? 60_000);
  let handle;
  for (;;) {
    try {
      handle = await start();
      break;
    } catch (err) {
      if (!notPolling(err)) throw err;
      if (Date.now() > deadline) {
        throw new Error(
          `no worker of ${options.deploymentName}:${options.candidateBuildId} polls task queue ${taskQueue}: ` +
            'start the candidate version first (homeostat rollout status lists the versions)',
          { cause: err },
        );
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  return (await handle.result()) as CompatibilityReport;
}
