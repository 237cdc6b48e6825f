/**
 * A versioned worker's routing at start: the first version of a deployment becomes its Current version
 * (otherwise Temporal would route new runs to unversioned workers, and there are none); a later version
 * waits for `homeostat rollout` (manual) or makes itself Current (auto: `homeostat dev`, the demo).
 * Safe for workers starting together: each reads the deployment, writes with its conflict token, and
 * reads again after a conflict; a version that is already Current is left as it is.
 */
import type { WorkerDeploymentVersion } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import type { Logger } from 'pino';
import type { RolloutMode } from '../config/worker-versioning';
import { deploymentVersionString } from './deployment-version';

type WorkflowService = temporal.api.workflowservice.v1.WorkflowService;

/** Options of {@link establishVersionRouting}. */
export interface VersionRoutingOptions {
  /** A connection's `workflowService` (a `NativeConnection` or a client `Connection`). */
  readonly workflowService: WorkflowService;
  readonly namespace: string;
  readonly version: WorkerDeploymentVersion;
  /** @default 'manual' */
  readonly rollout?: RolloutMode;
  /** Recorded by Temporal as the routing change's last modifier. */
  readonly identity: string;
  readonly logger: Logger;
  /** Reads and writes before giving up when other writers keep winning. @default 10 */
  readonly attempts?: number;
}

/**
 * What {@link establishVersionRouting} found or did: `made-current` (it set this version Current),
 * `current` / `ramping` (already so), `waiting` (another version is Current; this one waits for
 * `homeostat rollout`).
 */
export type VersionRouting = 'made-current' | 'current' | 'ramping' | 'waiting';

const grpcNotFound = 5;
const grpcFailedPrecondition = 9;
const grpcAborted = 10;

function grpcCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/**
 * Makes a worker's version Current when the deployment has no Current version (or always, with
 * `rollout: 'auto'`), before the worker polls (`allowNoPollers`: a version is created when first
 * named, and the task queue it then registers receives the routing). Logs at warn level when the
 * version is neither Current nor Ramping.
 *
 * @throws the last error when Temporal refuses every attempt (other than a lost race, which is retried).
 */
export async function establishVersionRouting(options: VersionRoutingOptions): Promise<VersionRouting> {
  const { workflowService, namespace, version, logger } = options;
  const rollout = options.rollout ?? 'manual';
  const attempts = options.attempts ?? 10;
  const named = deploymentVersionString(version);
  for (let attempt = 1; ; attempt++) {
    let conflictToken: Uint8Array | undefined;
    let current: string | undefined;
    let ramping: string | undefined;
    try {
      const described = await workflowService.describeWorkerDeployment({
        namespace,
        deploymentName: version.deploymentName,
      });
      conflictToken = described.conflictToken ?? undefined;
      const routing = described.workerDeploymentInfo?.routingConfig;
      current = routing?.currentDeploymentVersion?.buildId || undefined;
      ramping = routing?.rampingDeploymentVersion?.buildId || undefined;
    } catch (err) {
      if (grpcCode(err) !== grpcNotFound) throw err; // no deployment yet: this is its first version
    }
    if (current === version.buildId) return 'current';
    if (current !== undefined && rollout === 'manual') {
      if (ramping === version.buildId) {
        logger.info({ version: named, current }, 'worker version is ramping');
        return 'ramping';
      }
      logger.warn(
        { version: named, current, rampingVersion: ramping },
        'worker version is not current: waiting for homeostat rollout promote',
      );
      return 'waiting';
    }
    try {
      await workflowService.setWorkerDeploymentCurrentVersion({
        namespace,
        deploymentName: version.deploymentName,
        buildId: version.buildId,
        ...(conflictToken && conflictToken.length > 0 ? { conflictToken } : {}),
        identity: options.identity,
        allowNoPollers: true,
        // auto replaces a Current version before this one polls (it polls the same task queue right after).
        ignoreMissingTaskQueues: rollout === 'auto',
      });
      logger.info({ version: named, previous: current, rollout }, 'worker version made current');
      return 'made-current';
    } catch (err) {
      const code = grpcCode(err);
      const lostRace = code === grpcFailedPrecondition || code === grpcAborted || code === grpcNotFound;
      if (!lostRace || attempt >= attempts) throw err;
      logger.debug({ err, version: named, attempt }, 'routing changed meanwhile; reading the deployment again');
      await new Promise((r) => setTimeout(r, 100 * attempt));
    }
  }
}
