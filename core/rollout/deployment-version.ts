/**
 * Names in Temporal's Worker Deployment Versioning: the deployment name homeostat derives from an
 * operator's name, the `<deployment>:<build>` value the server writes into the search attribute
 * `TemporalWorkerDeploymentVersion`, and the checks a build ID passes before a rollout command sends it.
 */
import { quoteShort, RolloutError } from './rollout-errors';

/**
 * The longest build ID (and deployment name) the server accepts: (`limit.maxIDLength` 1000 − 39) / 2
 * (server 1.32 `ValidateDeploymentVersionFields`).
 */
export const maxBuildIdLength = 480;

/**
 * The value of the search attribute `TemporalWorkerDeploymentVersion` for a version:
 * `<deploymentName>:<buildId>`. (The TypeScript SDK's `toCanonicalString()` gives the older `name.build`
 * form, which matches nothing.)
 */
export function versionSearchValue(deploymentName: string, buildId: string): string {
  return `${deploymentName}:${buildId}`;
}

/** Why `buildId` cannot be sent to the server or into a visibility query, or undefined when it can. */
export function buildIdProblem(buildId: string): string | undefined {
  if (buildId === '') return 'the build ID is empty';
  if (buildId.length > maxBuildIdLength) {
    return `the build ID is ${buildId.length} characters long; Temporal accepts at most ${maxBuildIdLength}`;
  }
  if (buildId.startsWith('__')) return 'a build ID must not start with "__" (reserved by Temporal)';
  if (buildId.includes(':'))
    return 'a build ID must not contain ":" (it separates the deployment name from the build ID)';
  if (!/^[A-Za-z0-9][A-Za-z0-9._+-]*$/.test(buildId)) {
    return 'a build ID is letters, digits, ".", "_", "+" and "-", starting with a letter or digit';
  }
  return undefined;
}

/** Why `name` cannot be a Worker Deployment name, or undefined when it can. */
export function deploymentNameProblem(name: string): string | undefined {
  if (name === '') return 'the deployment name is empty';
  if (name.length > maxBuildIdLength) return `the deployment name is longer than ${maxBuildIdLength} characters`;
  if (name.startsWith('__')) return 'a deployment name must not start with "__" (reserved by Temporal)';
  // "/" too: the Temporal Worker Controller names a deployment `<namespace>/<name>`.
  if (!/^[A-Za-z0-9][A-Za-z0-9_+/-]*$/.test(name)) {
    return 'a deployment name is letters, digits, "_", "+", "/" and "-" (no "." or ":"), starting with a letter or digit';
  }
  return undefined;
}

/** Throws `ERR_ROLLOUT_INPUT` naming the problem when `buildId` is not one a rollout command may send. */
export function assertBuildId(buildId: string): void {
  const problem = buildIdProblem(buildId);
  if (problem) throw new RolloutError('ERR_ROLLOUT_INPUT', `build ID ${quoteShort(buildId)}: ${problem}`);
}

/** Throws `ERR_ROLLOUT_INPUT` naming the problem when `name` is not a deployment name. */
export function assertDeploymentName(name: string): void {
  const problem = deploymentNameProblem(name);
  if (problem) throw new RolloutError('ERR_ROLLOUT_INPUT', `deployment ${quoteShort(name)}: ${problem}`);
}

/** Throws `ERR_ROLLOUT_INPUT` unless `name` is a workflow type name that can go into a visibility query. */
export function assertWorkflowType(name: string): void {
  if (!/^[A-Za-z_][A-Za-z0-9_-]{0,199}$/.test(name)) {
    throw new RolloutError('ERR_ROLLOUT_INPUT', `workflow type ${quoteShort(name)}: letters, digits, "_" and "-" only`);
  }
}
