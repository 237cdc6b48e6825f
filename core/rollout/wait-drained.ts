/**
 * Waiting until a version is drained: no open workflow is pinned to it any more, so its workers may be
 * scaled down. Polls `DescribeWorkerDeploymentVersion` gently (at most once a second: the server
 * rate-limits describes per namespace) and trusts the server's drainage status, which it computes a
 * grace period after the version stops being Current or Ramping and then every refresh interval
 * (`matching.wv.VersionDrainageStatus*`, 3 minutes each by default).
 */
import type { Client } from '@temporalio/client';
import { drainageOf, type RolloutTarget, type VersionDrainage, versionStatusName } from './deployment-description';
import { assertBuildId, assertDeploymentName } from './deployment-version';
import { quoteShort, RolloutError, rolloutErrorFrom } from './rollout-errors';

/** Options of {@link waitDrained}. */
export interface WaitDrainedOptions {
  /** Time between two describes; raised to 1 s when lower. @default 2000 */
  readonly intervalMs?: number;
  /** Called after each describe with what it saw (progress output). */
  readonly onCheck?: (seen: { status: string; drainage?: VersionDrainage }) => void;
  /** Stops waiting early. */
  readonly signal?: AbortSignal;
  /** Injected for tests. @default setTimeout */
  readonly sleep?: (ms: number) => Promise<void>;
}

/**
 * Resolves with the drainage once `buildId` is Drained; throws `ERR_ROLLOUT_TIMEOUT` after
 * `timeoutMs`, and `ERR_ROLLOUT_REFUSED` when the version is Current or Ramping (it would never drain).
 */
export async function waitDrained(
  client: Client,
  target: RolloutTarget,
  buildId: string,
  timeoutMs: number,
  options: WaitDrainedOptions = {},
): Promise<VersionDrainage> {
  assertDeploymentName(target.deploymentName);
  assertBuildId(buildId);
  const interval = Math.max(1000, options.intervalMs ?? 2000);
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let res;
    try {
      res = await client.workflowService.describeWorkerDeploymentVersion({
        namespace: target.namespace,
        deploymentVersion: { deploymentName: target.deploymentName, buildId },
      });
    } catch (err) {
      throw rolloutErrorFrom(err, target, buildId);
    }
    const info = res.workerDeploymentVersionInfo;
    const status = versionStatusName(info?.status);
    const drainage = drainageOf(info?.drainageInfo);
    options.onCheck?.({ status, ...(drainage ? { drainage } : {}) });
    if (drainage?.status === 'Drained') return drainage;
    if (status === 'Current' || status === 'Ramping') {
      throw new RolloutError(
        'ERR_ROLLOUT_REFUSED',
        `build ${quoteShort(buildId)} is ${status}: it drains only once another version is promoted and the ramp cleared`,
      );
    }
    if (Date.now() + interval > deadline || options.signal?.aborted) {
      throw new RolloutError(
        'ERR_ROLLOUT_TIMEOUT',
        `build ${quoteShort(buildId)} did not drain within ${Math.round(timeoutMs / 1000)} s (status ${status}` +
          `${drainage?.lastCheckedTime ? `, last checked ${drainage.lastCheckedTime}` : ''}): pinned workflows were open ` +
          'at the last check (the server checks again every few minutes; `homeostat rollout status` counts them; `wake` moves them)',
      );
    }
    await sleep(interval);
  }
}
