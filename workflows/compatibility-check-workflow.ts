/**
 * The compatibility check of `homeostat rollout`: started by the CLI pinned to the candidate version
 * (`versioningOverride: { pinnedTo }`), so its one activity runs on the candidate's workers and reads
 * the current version's carried-state envelopes with the candidate's reader (`core/carried-state`).
 */
import { proxyActivities } from '@temporalio/workflow';
import type { CompatibilityActivities, CompatibilityCheckInput, CompatibilityReport } from '../core/carried-state';

const { checkCarriedStates } = proxyActivities<CompatibilityActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumAttempts: 3 },
  summary: 'read the current version’s carried states with this build’s reader',
});

/** Reads every running object workflow's carried state of the current version with this build's reader. */
export async function compatibilityCheckWorkflow(input: CompatibilityCheckInput): Promise<CompatibilityReport> {
  return checkCarriedStates(input);
}
