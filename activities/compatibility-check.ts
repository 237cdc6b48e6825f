/**
 * The server side of `homeostat rollout`'s compatibility gate, run by a candidate version's worker:
 * list the object workflows running on the current version (visibility), ask each for the envelope it
 * would carry if it continued as new now (`carried-state`, answered by the current version's workers),
 * and read every envelope with this build's reader (`core/carried-state`).
 */
import { Context, sleep } from '@temporalio/activity';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import {
  carriedStateQuery,
  checkCarriedStates,
  type CollectedCarriedState,
  type CompatibilityActivities,
  type CompatibilityReport,
} from '../core/carried-state';
import { objectWorkflowType } from '../core/definitions';

/** Workflows queried at once. */
const concurrency = 16;
/** Times a workflow is asked for its envelope before it counts as unanswered (1 s, 2 s, 4 s, 8 s between). */
const queryAttempts = 5;

/** An error's message with its causes' (the client's "Failed to query Workflow" names no reason itself). */
function errorText(err: unknown): string {
  const parts: string[] = [];
  for (
    let e = err as { message?: string; cause?: unknown } | undefined, i = 0;
    e && i < 4;
    e = e.cause as typeof e, i++
  ) {
    if (e.message) parts.push(e.message);
  }
  return parts.join(': ') || String(err);
}

/** The visibility query of the object workflows running on a version. */
export function runningOnVersionQuery(version: WorkerDeploymentVersion): string {
  const value = `${version.deploymentName}:${version.buildId}`;
  if (/['"\\]/.test(value)) throw new Error(`a deployment version with quotes cannot be queried: ${value}`);
  return `TemporalWorkerDeploymentVersion = '${value}' AND ExecutionStatus = 'Running' AND WorkflowType = '${objectWorkflowType}'`;
}

/**
 * The compatibility check's activity, reading envelopes with `read` (this build's reader; a test may
 * give another build's).
 */
export function createCompatibilityActivities(
  read: (envelopes: readonly CollectedCarriedState[]) => CompatibilityReport = checkCarriedStates,
): CompatibilityActivities {
  return {
    async checkCarriedStates({ currentVersion, limit = 1000 }) {
      const ctx = Context.current();
      const client = ctx.client;
      const runs: { workflowId: string; runId: string }[] = [];
      for await (const wf of client.workflow.list({ query: runningOnVersionQuery(currentVersion), pageSize: 500 })) {
        if (runs.length >= limit) break;
        runs.push({ workflowId: wf.workflowId, runId: wf.runId });
      }
      const collected: CollectedCarriedState[] = [];
      const unanswered: { workflowId: string; error: string }[] = [];
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < runs.length) {
          const run = runs[next++]!;
          for (let attempt = 1; ; attempt++) {
            try {
              const envelope = await client.workflow.getHandle(run.workflowId, run.runId).query(carriedStateQuery);
              collected.push({ workflowId: run.workflowId, envelope });
              break;
            } catch (err) {
              const error = errorText(err);
              // A run that closed meanwhile carries nothing.
              if (/completed|closed|not found/i.test(error)) break;
              // A busy worker (a query needs a workflow task, a replay if the run is not cached) may time
              // out: asked again (queries are free). One that never answers cannot be shown compatible.
              if (attempt >= queryAttempts) {
                unanswered.push({ workflowId: run.workflowId, error: `query failed ${attempt} times: ${error}` });
                break;
              }
              ctx.heartbeat({ queried: next });
              await sleep(1000 * 2 ** (attempt - 1));
            }
          }
          ctx.heartbeat({ queried: next });
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, runs.length) }, worker));
      const report = read(collected);
      return { checked: report.checked + unanswered.length, incompatible: [...report.incompatible, ...unanswered] };
    },
  };
}
