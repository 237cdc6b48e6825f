/**
 * The dry-run workflow (`planObjectWorkflow`): one activity on the object's task queue computes what a
 * pass would do (`core/dry-run.ts`). A workflow of its own, never the object's: it neither signals nor
 * queries the object's workflow, so dry runs are never interleaved with its passes and cost them
 * nothing. A dry run is read-only, so its activity may retry; the whole run is bounded by its
 * execution timeout, set by whoever starts it.
 */
import { proxyActivities } from '@temporalio/workflow';
import { planActivityType, planTimeoutMs, type DryRunResult, type PlanInput } from '../core/dry-run';

const activities = proxyActivities<Record<typeof planActivityType, (input: PlanInput) => Promise<DryRunResult>>>({
  startToCloseTimeout: planTimeoutMs - 10_000,
  retry: { initialInterval: '1 second', maximumInterval: '5 seconds', maximumAttempts: 3 },
  summary: 'dry run',
});

/** Computes what a reconcile pass of `input.ref` (or of `input.manifest`) would do. */
export async function planObjectWorkflow(input: PlanInput): Promise<DryRunResult> {
  return activities[planActivityType](input);
}
