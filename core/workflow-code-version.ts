/**
 * The one compatibility rule of homeostat's workflow code: a single workflow-code version number.
 *
 * Every run of the object workflow records, in its start input, the workflow-code version whose
 * behaviour it follows ({@link ObjectWorkflowInput.codeVersion (core/definitions)}). Every starter (the informer bridge,
 * the API, continue-as-new) writes the current {@link workflowCodeVersion}; the workflow reads the
 * version from its own input and branches on it, so a history recorded under an older version replays
 * exactly as it ran, and the next run (after continue-as-new) moves to the current behaviour. A version
 * newer than the build's is followed as the build's own (a rollback: see {@link codeVersionOf}).
 *
 * A change to workflow code that changes the commands a history produces needs a new version: bump
 * {@link workflowCodeVersion}, branch on it where behaviour changes, record histories of the new
 * version under `test/histories/<homeostat version>/`, and update the fingerprint in
 * `test/histories/workflow-code.json`. CI replays every recorded history of every release and fails a
 * change to workflow code whose fingerprint has no version of its own (`docs/upgrading.md`).
 *
 * Decided by the input rather than by `patched()` markers: a marker costs a search-attribute upsert (a
 * billable action) in every run that takes it.
 */

/**
 * The versions of workflow code, oldest first, with what each changed. The index is the version.
 * Only ever appended to.
 */
export const workflowCodeVersions = [
  'regular activities for observe, status and finalizer; exact drift interval (homeostat 0.1)',
  'local activities for observe, status, finalizer and local steps; heartbeats for regular steps; drift jitter',
  "observe runs the plan's leading chain of local steps",
  'a drift check keeps a running timer that fires inside its jitter window',
  'a progressing step holds back its dependents; a step sees its previous result (homeostat 0.2)',
  'an unchanged spec is recorded once per run (by digest); regular steps carry the pass priority; runs move to a new worker version between passes; steps may wait for approval (homeostat 0.3)',
  "a pass takes its leading steps' successes and a status it would not change in the same turn, with no promise of their own; the loop is woken by what arrives, not by a condition (homeostat 0.4)",
] as const;

/** The workflow-code version of this build: what every new run follows. */
export const workflowCodeVersion = workflowCodeVersions.length - 1;

/** The fields of a start input that say which workflow-code version a run follows. */
export interface VersionedInput {
  readonly codeVersion?: number;
  readonly localActivities?: boolean;
  readonly fuseLeadingSteps?: boolean;
  readonly driftTimerWindow?: boolean;
}

/**
 * The workflow-code version a run follows, from its start input: `min(codeVersion, this build's
 * version)` when `codeVersion` is set, else derived from the three booleans that runs recorded before
 * the version number carried (`localActivities` → 1, `fuseLeadingSteps` → 2, `driftTimerWindow` → 3;
 * none → 0).
 *
 * Under Worker Deployment Versioning the input of a run is written by one build and executed by
 * another: a continue-as-new of the old build starts the new build's first run (the input names the
 * old version: the new behaviour takes effect from the next continue-as-new), and a rollback lands a
 * run written by a newer build on an older one, which follows its own, newest version rather than
 * refusing the run (a refused run would fail its workflow tasks until a newer worker came back).
 *
 * @throws Error when `codeVersion` is not a whole number ≥ 0.
 */
export function codeVersionOf(input: VersionedInput): number {
  if (input.codeVersion !== undefined) {
    if (!Number.isInteger(input.codeVersion) || input.codeVersion < 0) {
      throw new Error(`this run's workflow-code version ${input.codeVersion} is not a whole number ≥ 0`);
    }
    return Math.min(input.codeVersion, workflowCodeVersion);
  }
  if (input.localActivities !== true) return 0;
  if (input.fuseLeadingSteps !== true) return 1;
  return input.driftTimerWindow === true ? 3 : 2;
}
