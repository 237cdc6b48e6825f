/**
 * The worker's Worker Deployment Version: a deployment name (the operator's, per task queue) and a build
 * ID naming what the worker runs (the operator's version, homeostat's version, the workflow-code version
 * and a hash of the workflow bundle). Temporal routes new runs to the deployment's Current (or Ramping)
 * version and keeps PINNED runs on theirs (docs/upgrading.md, "Versioned workers").
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import type { WorkflowBundleOption } from '@temporalio/worker';
import { deploymentVersionPartProblems, maxDeploymentVersionPartBytes } from '../config/worker-versioning';
import { defaultTaskQueue } from '../core/definitions';
import { workflowCodeVersion } from '../core/workflow-code-version';

/** A short sha256 (12 hex digits) of a text. */
function shortHash(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 12);
}

/** Replaces what Temporal refuses (`.`, `:`, a leading `__`) and shortens to the limit, keeping names distinct. */
function sanitize(raw: string, forbidden: RegExp): string {
  let value = raw.replace(forbidden, '-').replace(/^_+/, '');
  if (value === '') value = 'homeostat';
  if (Buffer.byteLength(value, 'utf8') > maxDeploymentVersionPartBytes) {
    value = `${value.slice(0, maxDeploymentVersionPartBytes / 2)}-${shortHash(raw)}`;
  }
  return value;
}

/**
 * The deployment name of an operator's workers on a task queue: the operator's name on the default
 * queue (`homeostat`), `<operator>-<task queue>` on another, with `.` and `:` (which Temporal refuses
 * in a deployment name) replaced by `-` and a leading `__` dropped. A Temporal deployment's Current
 * version applies to every task queue its versions poll, so workers of one operator on two queues
 * (tests, two installations in one namespace) are two deployments and are rolled out apart.
 */
export function deploymentNameFor(operatorName: string, taskQueue: string = defaultTaskQueue): string {
  return sanitize(taskQueue === defaultTaskQueue ? operatorName : `${operatorName}-${taskQueue}`, /[.:]/g);
}

/** The version of the homeostat package this code belongs to (its nearest `package.json` named homeostat). */
export const homeostatVersion: string = ((): string => {
  for (let dir = resolve(__dirname); ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      const parsed = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown; version?: unknown };
      if (parsed.name === 'homeostat' && typeof parsed.version === 'string') return parsed.version;
    }
    if (dirname(dir) === dir) return '0.0.0';
  }
})();

/** The short hash (12 hex digits of sha256) of a workflow bundle's code, read from disk for `{ codePath }`. */
export function bundleHashOf(bundle: WorkflowBundleOption): string {
  if ('code' in bundle) return shortHash(bundle.code);
  if ('codePath' in bundle) return shortHash(readFileSync(bundle.codePath));
  throw new Error('a workflow bundle without code or codePath has no hash');
}

/** The ingredients of {@link buildIdFor}. */
export interface BuildIdParts {
  /** The operator's own version (`defineOperator({ version })`); omitted from the build ID when unset. */
  readonly operatorVersion?: string;
  /** @default {@link homeostatVersion} */
  readonly homeostatVersion?: string;
  /** @default this build's {@link workflowCodeVersion} */
  readonly workflowCodeVersion?: number;
  /** {@link bundleHashOf} of the workflow bundle the worker runs. */
  readonly bundleHash: string;
}

/**
 * The build ID of a worker: `op<operator version>-hs<homeostat version>-w<workflow-code version>-<bundle
 * hash>`, e.g. `op1.2.0-hs0.3.0-w5-0123456789ab` (`op…-` only when the operator has a version). Any
 * change of the operator's version, of homeostat or of the workflow code is a new build; a change of
 * the operator's steps alone is a new build only when its version changes (steps run as activities,
 * not in the workflow bundle): give the operator a version (or set `HOMEOSTAT_BUILD_ID`) to roll it out.
 */
export function buildIdFor(parts: BuildIdParts): string {
  const op = parts.operatorVersion ? `op${parts.operatorVersion}-` : '';
  const raw = `${op}hs${parts.homeostatVersion ?? homeostatVersion}-w${parts.workflowCodeVersion ?? workflowCodeVersion}-${parts.bundleHash}`;
  return sanitize(raw, /:/g);
}

/** Thrown when a deployment name or build ID given to the worker is one Temporal would refuse. */
export class DeploymentVersionError extends Error {
  override readonly name = 'DeploymentVersionError';
}

/** The inputs of {@link resolveDeploymentVersion}. */
export interface DeploymentVersionInputs {
  readonly operator: { readonly name: string; readonly version?: string };
  /** @default 'homeostat' */
  readonly taskQueue?: string;
  readonly workflowBundle: WorkflowBundleOption;
  /** Overrides the derived deployment name (`HOMEOSTAT_DEPLOYMENT_NAME`, `TEMPORAL_DEPLOYMENT_NAME`). */
  readonly deploymentName?: string;
  /** Overrides the derived build ID (`HOMEOSTAT_BUILD_ID`, `TEMPORAL_WORKER_BUILD_ID`). */
  readonly buildId?: string;
}

/**
 * The deployment version a worker runs as: the overrides when given (checked), else
 * {@link deploymentNameFor} and {@link buildIdFor}.
 *
 * @throws DeploymentVersionError naming every problem of an override Temporal would refuse.
 */
export function resolveDeploymentVersion(inputs: DeploymentVersionInputs): WorkerDeploymentVersion {
  const deploymentName = inputs.deploymentName ?? deploymentNameFor(inputs.operator.name, inputs.taskQueue);
  const buildId =
    inputs.buildId ??
    buildIdFor({
      ...(inputs.operator.version ? { operatorVersion: inputs.operator.version } : {}),
      bundleHash: bundleHashOf(inputs.workflowBundle),
    });
  const problems = [
    ...deploymentVersionPartProblems('deployment name', deploymentName),
    ...deploymentVersionPartProblems('build ID', buildId),
  ];
  if (problems.length > 0) {
    throw new DeploymentVersionError(
      `invalid worker deployment version ${JSON.stringify(`${deploymentName}:${buildId}`)}: ${problems.join('; ')}`,
    );
  }
  return { deploymentName, buildId };
}

/** The `TemporalWorkerDeploymentVersion` search-attribute value of a version: `<deployment name>:<build ID>`. */
export function deploymentVersionString(version: WorkerDeploymentVersion): string {
  return `${version.deploymentName}:${version.buildId}`;
}
