/**
 * The compatibility gate a routing change passes before it sends anything: a function that checks
 * whether the candidate build can take over the runs of the current one (it replays or validates their
 * carried state). The rollout library only calls it; the check itself is the workers' business
 * (`runCompatibilityCheck`), plugged in by the CLI.
 */
import type { Client } from '@temporalio/client';

/** What a {@link CompatibilityGate} checks. */
export interface CompatibilityCheckRequest {
  readonly namespace: string;
  readonly deploymentName: string;
  /** The build about to receive new runs (and, by upgrade on continue-as-new, the running objects). */
  readonly candidateBuildId: string;
  /** The build that takes new runs now. */
  readonly currentBuildId: string;
  /** How many running workflows to check at most. */
  readonly limit: number;
}

/** The answer of a {@link CompatibilityGate}. */
export interface CompatibilityReport {
  /** How many workflows were checked. */
  readonly checked: number;
  /** The workflows the candidate cannot take over, with why. Empty: the change may go ahead. */
  readonly incompatible: readonly { readonly workflowId: string; readonly error: string }[];
}

/**
 * Checks a candidate build against the runs of the current one; the signature of the workers'
 * `runCompatibilityCheck`.
 */
export type CompatibilityGate = (client: Client, request: CompatibilityCheckRequest) => Promise<CompatibilityReport>;

/** How the routing commands use the gate. */
export interface GateOptions {
  /** The check run before routing changes; without one, nothing is checked. */
  readonly gate?: CompatibilityGate;
  /** Change routing without the check (dangerous: an incompatible build fails the runs it takes over). @default false */
  readonly skipCheck?: boolean;
  /** How many running workflows the check looks at. @default 100 */
  readonly checkLimit?: number;
}

/** The default of {@link GateOptions.checkLimit}. */
export const defaultCheckLimit = 100;
