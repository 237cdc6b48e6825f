/**
 * Reading a Worker Deployment: `DescribeWorkerDeployment` over the client's raw gRPC service (the
 * TypeScript SDK 1.24 has no deployment client), turned from protobuf numbers and timestamps into
 * plain values the rollout commands decide on.
 */
import type { Client } from '@temporalio/client';
import { optionalTsToDate } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { rolloutErrorFrom } from './rollout-errors';

const VersionStatus = temporal.api.enums.v1.WorkerDeploymentVersionStatus;
const DrainageStatus = temporal.api.enums.v1.VersionDrainageStatus;
const UpdateState = temporal.api.enums.v1.RoutingConfigUpdateState;

/** Which Worker Deployment a rollout command works on. */
export interface RolloutTarget {
  /** The Temporal namespace. */
  readonly namespace: string;
  /** The Worker Deployment name (the operator's name, `deploymentNameFor`). */
  readonly deploymentName: string;
}

/**
 * A version's status as Temporal reports it. `Current` and `Ramping` take new runs; `Draining`: no new
 * runs, but pinned runs still open; `Drained`: no open pinned run (its workers may still be needed for
 * queries of closed runs within retention); `Inactive`: never took new runs (or only by an override);
 * `Created`: registered without pollers.
 */
export type VersionStatusName = 'Current' | 'Ramping' | 'Draining' | 'Drained' | 'Inactive' | 'Created' | 'Unspecified';

/** A version's drainage, as the server last computed it (not present while Current or Ramping). */
export interface VersionDrainage {
  readonly status: 'Draining' | 'Drained';
  /** When the status last changed (ISO time). */
  readonly lastChangedTime?: string;
  /**
   * When the server last checked it (ISO time): drainage is checked a grace period after the version
   * leaves Current/Ramping and then every refresh interval (3 minutes by default each).
   */
  readonly lastCheckedTime?: string;
}

/** One version of a deployment, from the deployment's version summaries. */
export interface VersionSummary {
  readonly buildId: string;
  readonly status: VersionStatusName;
  readonly drainage?: VersionDrainage;
  readonly createTime?: string;
  readonly currentSinceTime?: string;
  readonly rampingSinceTime?: string;
  /** When it last became Current: set for every version that has ever been Current. */
  readonly lastCurrentTime?: string;
  /** When it last stopped being Current or Ramping. */
  readonly lastDeactivationTime?: string;
}

/** A deployment as `DescribeWorkerDeployment` answers it. */
export interface DeploymentDescription {
  readonly namespace: string;
  readonly deploymentName: string;
  /** The token a routing change passes, so that a change made meanwhile by someone else is refused. */
  readonly conflictToken: Uint8Array;
  /** The Current version's build ID; undefined when new runs go to unversioned workers. */
  readonly currentBuildId?: string;
  /** The Ramping version, if any, and the share of new runs it takes. */
  readonly ramping?: { readonly buildId: string; readonly percentage: number };
  /** Whether every task queue partition has the latest routing yet. */
  readonly routingUpdate?: 'in-progress' | 'completed';
  readonly lastModifierIdentity?: string;
  /** The manager identity, when one client claimed exclusive control of the routing. */
  readonly managerIdentity?: string;
  /** Every version, newest first. */
  readonly versions: readonly VersionSummary[];
}

/** The status name of a `WorkerDeploymentVersionStatus` number. */
export function versionStatusName(status: number | null | undefined): VersionStatusName {
  switch (status) {
    case VersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_CURRENT:
      return 'Current';
    case VersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_RAMPING:
      return 'Ramping';
    case VersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_DRAINING:
      return 'Draining';
    case VersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_DRAINED:
      return 'Drained';
    case VersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_INACTIVE:
      return 'Inactive';
    case VersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_CREATED:
      return 'Created';
    default:
      return 'Unspecified';
  }
}

type Timestamp = Parameters<typeof optionalTsToDate>[0];

/** An ISO time from a protobuf timestamp, or undefined. */
export function isoTime(ts: Timestamp): string | undefined {
  return optionalTsToDate(ts)?.toISOString();
}

/** The drainage of a version (summary or `DescribeWorkerDeploymentVersion` info), if it has one. */
export function drainageOf(
  info: { status?: number | null; lastChangedTime?: Timestamp; lastCheckedTime?: Timestamp } | null | undefined,
): VersionDrainage | undefined {
  const status =
    info?.status === DrainageStatus.VERSION_DRAINAGE_STATUS_DRAINED
      ? 'Drained'
      : info?.status === DrainageStatus.VERSION_DRAINAGE_STATUS_DRAINING
        ? 'Draining'
        : undefined;
  if (!status) return undefined;
  const lastChangedTime = isoTime(info?.lastChangedTime);
  const lastCheckedTime = isoTime(info?.lastCheckedTime);
  return { status, ...(lastChangedTime ? { lastChangedTime } : {}), ...(lastCheckedTime ? { lastCheckedTime } : {}) };
}

const defined = <T extends object>(o: T): T =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

/** Describes the deployment; an unknown deployment is `ERR_ROLLOUT_REFUSED` with the reason. */
export async function describeDeployment(client: Client, target: RolloutTarget): Promise<DeploymentDescription> {
  const { namespace, deploymentName } = target;
  let res: temporal.api.workflowservice.v1.IDescribeWorkerDeploymentResponse;
  try {
    res = await client.workflowService.describeWorkerDeployment({ namespace, deploymentName });
  } catch (err) {
    throw rolloutErrorFrom(err, target);
  }
  const info = res.workerDeploymentInfo;
  const routing = info?.routingConfig;
  const versions: VersionSummary[] = (info?.versionSummaries ?? [])
    .map((v) =>
      defined<VersionSummary>({
        buildId: v.deploymentVersion?.buildId ?? '',
        status: versionStatusName(v.status),
        drainage: drainageOf(v.drainageInfo),
        createTime: isoTime(v.createTime),
        currentSinceTime: isoTime(v.currentSinceTime),
        rampingSinceTime: isoTime(v.rampingSinceTime),
        lastCurrentTime: isoTime(v.lastCurrentTime),
        lastDeactivationTime: isoTime(v.lastDeactivationTime),
      }),
    )
    .filter((v) => v.buildId !== '')
    .sort((a, b) => (b.createTime ?? '').localeCompare(a.createTime ?? ''));
  const currentBuildId = routing?.currentDeploymentVersion?.buildId || undefined;
  const rampingBuildId = routing?.rampingDeploymentVersion?.buildId || undefined;
  const updateState = info?.routingConfigUpdateState;
  return defined<DeploymentDescription>({
    namespace,
    deploymentName,
    conflictToken: res.conflictToken ?? new Uint8Array(),
    currentBuildId,
    ramping: rampingBuildId
      ? { buildId: rampingBuildId, percentage: routing?.rampingVersionPercentage ?? 0 }
      : undefined,
    routingUpdate:
      updateState === UpdateState.ROUTING_CONFIG_UPDATE_STATE_IN_PROGRESS
        ? 'in-progress'
        : updateState === UpdateState.ROUTING_CONFIG_UPDATE_STATE_COMPLETED
          ? 'completed'
          : undefined,
    lastModifierIdentity: info?.lastModifierIdentity || undefined,
    managerIdentity: info?.managerIdentity || undefined,
    versions,
  });
}

/** The workflow task queue type, as the API names it. */
export const workflowTaskQueueType = temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW;

/** The names of the workflow task queues a version of the deployment polls (`DescribeWorkerDeploymentVersion`). */
export async function versionWorkflowTaskQueues(
  client: Client,
  d: Pick<DeploymentDescription, 'namespace' | 'deploymentName'>,
  buildId: string,
): Promise<string[]> {
  const res = await client.workflowService.describeWorkerDeploymentVersion({
    namespace: d.namespace,
    deploymentVersion: { deploymentName: d.deploymentName, buildId },
  });
  return (res.versionTaskQueues ?? []).filter((q) => q.type === workflowTaskQueueType && q.name).map((q) => q.name!);
}
