/**
 * The worker's Worker Deployment Versioning settings from the environment (docs/upgrading.md,
 * "Versioned workers"): the deployment name and build ID overrides (`HOMEOSTAT_*`, or the `TEMPORAL_*`
 * names the Temporal Worker Controller injects), whether versioning is on, and the rollout mode.
 */
import { z } from 'zod';

/** The longest deployment name or build ID Temporal accepts, in bytes: (`limit.maxIDLength` 1000 − 39) / 2. */
export const maxDeploymentVersionPartBytes = 480;

/**
 * What Temporal would refuse in a deployment name or build ID (server `ValidateDeploymentVersionFields`),
 * plus the `:` homeostat refuses in a build ID too (it separates the two in the
 * `TemporalWorkerDeploymentVersion` search attribute): one message per problem, none when valid.
 */
export function deploymentVersionPartProblems(part: 'deployment name' | 'build ID', value: string): string[] {
  const problems: string[] = [];
  if (value === '') problems.push(`the ${part} is empty`);
  if (Buffer.byteLength(value, 'utf8') > maxDeploymentVersionPartBytes) {
    problems.push(`the ${part} is longer than ${maxDeploymentVersionPartBytes} bytes`);
  }
  if (value.startsWith('__')) problems.push(`the ${part} starts with '__' (reserved by Temporal)`);
  if (value.includes(':')) problems.push(`the ${part} contains ':'`);
  if (part === 'deployment name' && value.includes('.')) problems.push(`the ${part} contains '.'`);
  return problems;
}

const versionPart = (part: 'deployment name' | 'build ID') =>
  z
    .string()
    .optional()
    .superRefine((value, ctx) => {
      if (value === undefined) return;
      for (const message of deploymentVersionPartProblems(part, value)) ctx.addIssue({ code: 'custom', message });
    });

/** How a worker treats its own version at start: see {@link workerVersioningEnvSchema}. */
export type RolloutMode = 'manual' | 'auto';

/** The environment variables of Worker Deployment Versioning, merged into the worker's schema. */
export const workerVersioningEnvSchema = z.object({
  /** The deployment name; unset: the operator's name (`workers/deployment-version.ts`). */
  HOMEOSTAT_DEPLOYMENT_NAME: versionPart('deployment name'),
  /** The build ID; unset: derived from the operator's, homeostat's and the workflow code's versions. */
  HOMEOSTAT_BUILD_ID: versionPart('build ID'),
  /** Set by the Temporal Worker Controller; `HOMEOSTAT_DEPLOYMENT_NAME` wins when both are set. */
  TEMPORAL_DEPLOYMENT_NAME: versionPart('deployment name'),
  /** Set by the Temporal Worker Controller; `HOMEOSTAT_BUILD_ID` wins when both are set. */
  TEMPORAL_WORKER_BUILD_ID: versionPart('build ID'),
  /** `false` runs an unversioned worker (Temporal servers before 1.29). @default true */
  HOMEOSTAT_WORKER_VERSIONING: z
    .enum(['true', 'false'], { message: 'HOMEOSTAT_WORKER_VERSIONING must be true or false' })
    .default('true')
    .transform((v) => v === 'true'),
  /**
   * `manual`: this worker's version becomes Current only when the deployment has none (the first
   * version); later versions wait for `homeostat rollout`. `auto`: it makes itself Current at start.
   * @default manual
   */
  HOMEOSTAT_ROLLOUT: z.enum(['manual', 'auto']).default('manual'),
});
