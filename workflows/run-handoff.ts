/**
 * How a run of the object workflow hands over to the next: continue-as-new, always onto the worker
 * deployment's target version (`AUTO_UPGRADE`), and the test for moving to a new version between passes.
 *
 * The object workflow is PINNED (the versioned worker's default behavior): a run stays on the version that started it, so it never replays its
 * history on other code. When the deployment's Current (or, for this workflow, Ramping) version changes,
 * Temporal tells the run in its next workflow task (`targetWorkerDeploymentVersionChanged`); the run
 * then continues as new between passes, and the new run starts on the new version. Every
 * continue-as-new passes `AUTO_UPGRADE`: one without it, made while the run knew of a new version,
 * would be recorded as a declined upgrade and not told again until the routing changes (Temporal PR
 * #9374); when the target is the run's own version, it lands there as before.
 */
import { makeContinueAsNewFunc, workflowInfo } from '@temporalio/workflow';
import type { ObjectWorkflowInput, PassOutcome } from '../core/definitions';

/** Continues as new with `input`, onto the deployment's target version. */
export function continueAsNewOnTarget(input: ObjectWorkflowInput): Promise<never> {
  return makeContinueAsNewFunc<(input: ObjectWorkflowInput) => Promise<PassOutcome | undefined>>({
    initialVersioningBehavior: 'AUTO_UPGRADE',
  })(input);
}

/**
 * Whether the run should move to a new worker deployment version now: Temporal says its target version
 * changed. A run that was itself started by such a move waits for its first pass first, so a target
 * that keeps changing cannot make runs continue as new without ever reconciling.
 */
export function upgradeWanted(startedByUpgrade: boolean, passesThisRun: number): boolean {
  if (startedByUpgrade && passesThisRun === 0) return false;
  return workflowInfo().targetWorkerDeploymentVersionChanged === true;
}
