/**
 * The routing commands: `ramp` (a share of new runs to a build), `promote` (all new runs to a build)
 * and `rollback` (the previous Current version Current again), over `SetWorkerDeploymentRampingVersion`
 * and `SetWorkerDeploymentCurrentVersion`. Each describes the deployment first, refuses with a clear
 * reason what the server would refuse obscurely, runs the compatibility gate, passes the describe's
 * conflict token, and on a conflict (someone changed the deployment meanwhile) describes again and
 * retries once.
 */
import { hostname } from 'node:os';
import type { Client } from '@temporalio/client';
import { type CompatibilityCheckRequest, defaultCheckLimit, type GateOptions } from './compatibility-gate';
import { type DeploymentDescription, describeDeployment, type RolloutTarget } from './deployment-description';
import { assertBuildId, assertDeploymentName } from './deployment-version';
import {
  isConflictTokenMismatch,
  noPollersMessage,
  quoteShort,
  RolloutError,
  rolloutErrorFrom,
} from './rollout-errors';

/** Options every routing command takes. */
export interface RoutingOptions extends GateOptions {
  /** Who changes the routing, recorded by Temporal as the last modifier. @default `homeostat-rollout@<host>` */
  readonly identity?: string;
}

/** What a routing command did. */
export interface RoutingChange {
  /** False when the routing already was as asked (nothing sent). */
  readonly changed: boolean;
  readonly currentBuildId?: string;
  readonly ramping?: { readonly buildId: string; readonly percentage: number };
  /** The Current version before the change. */
  readonly previousCurrentBuildId?: string;
  /** The compatibility check's answer, when one ran. */
  readonly checked?: number;
}

/** The identity rollout commands record: `homeostat-rollout@<host>`. */
export function defaultRolloutIdentity(): string {
  return `homeostat-rollout@${hostname()}`;
}

/**
 * The build a `ramp` or `promote` without a build ID means: the Ramping version, else the newest
 * version that is not Current. Undefined when there is none.
 */
export function candidateBuildId(d: DeploymentDescription): string | undefined {
  return d.ramping?.buildId ?? d.versions.find((v) => v.buildId !== d.currentBuildId)?.buildId;
}

/**
 * The version `rollback` makes Current again: of the versions that have been Current and are not now,
 * the one that became Current last (`lastCurrentTime`) — the one the last promote replaced.
 */
export function previousCurrentBuildId(d: DeploymentDescription): string | undefined {
  return d.versions
    .filter((v) => v.buildId !== d.currentBuildId && v.lastCurrentTime !== undefined)
    .sort((a, b) => (b.lastCurrentTime ?? '').localeCompare(a.lastCurrentTime ?? ''))[0]?.buildId;
}

function requireKnown(d: DeploymentDescription, buildId: string): void {
  if (!d.versions.some((v) => v.buildId === buildId)) {
    throw new RolloutError(
      'ERR_ROLLOUT_REFUSED',
      `deployment ${quoteShort(d.deploymentName)}: ${noPollersMessage(buildId)}`,
    );
  }
}

async function runGate(client: Client, d: DeploymentDescription, candidate: string, options: GateOptions) {
  // No Current version: no pinned run of another build exists to be taken over.
  if (!options.gate || options.skipCheck || d.currentBuildId === undefined || d.currentBuildId === candidate) {
    return undefined;
  }
  const request: CompatibilityCheckRequest = {
    namespace: d.namespace,
    deploymentName: d.deploymentName,
    candidateBuildId: candidate,
    currentBuildId: d.currentBuildId,
    limit: options.checkLimit ?? defaultCheckLimit,
  };
  const report = await options.gate(client, request);
  if (report.incompatible.length > 0) {
    const shown = report.incompatible.slice(0, 20).map((i) => `  ${i.workflowId}: ${i.error}`);
    const more = report.incompatible.length > 20 ? [`  … and ${report.incompatible.length - 20} more`] : [];
    throw new RolloutError(
      'ERR_ROLLOUT_INCOMPATIBLE',
      `build ${quoteShort(candidate)} cannot take over ${report.incompatible.length} of ${report.checked} checked ` +
        `workflows of build ${quoteShort(d.currentBuildId)}; routing unchanged:\n${[...shown, ...more].join('\n')}`,
      { details: report },
    );
  }
  return report.checked;
}

/** Describes, calls `change` with the description, and on a conflict token mismatch does both once more. */
async function withConflictRetry<T>(
  client: Client,
  target: RolloutTarget,
  first: DeploymentDescription,
  change: (d: DeploymentDescription) => Promise<T>,
  buildId?: string,
): Promise<T> {
  try {
    return await change(first);
  } catch (err) {
    if (!isConflictTokenMismatch(err)) throw rolloutErrorFrom(err, target, buildId);
  }
  try {
    return await change(await describeDeployment(client, target));
  } catch (err) {
    throw rolloutErrorFrom(err, target, buildId);
  }
}

function checkTarget(target: RolloutTarget, buildId?: string): void {
  assertDeploymentName(target.deploymentName);
  if (buildId !== undefined) assertBuildId(buildId);
}

/** Clears the deployment's ramp (no version Ramping any more), with `d`'s conflict token and one retry. */
async function clearRamp(
  client: Client,
  target: RolloutTarget,
  d: DeploymentDescription,
  identity: string,
): Promise<void> {
  await withConflictRetry(client, target, d, (now) =>
    client.workflowService.setWorkerDeploymentRampingVersion({
      ...target,
      buildId: '',
      percentage: 0,
      conflictToken: now.conflictToken,
      identity,
    }),
  );
}

/** Throws `ERR_ROLLOUT_INPUT` unless `percent` is a ramp percentage: 0 (clears the ramp) up to, not including, 100. */
export function assertRampPercent(percent: number): void {
  if (!Number.isFinite(percent) || percent < 0 || percent >= 100) {
    throw new RolloutError(
      'ERR_ROLLOUT_INPUT',
      `ramp ${String(percent)}: a ramp is a percentage from 0 (clears the ramp) to below 100 (use promote for 100)`,
    );
  }
}

/**
 * Sends `percent` % of new runs to `buildId` (default: {@link candidateBuildId}); 0 clears the ramp.
 * Pinned runs stay where they are; the compatibility gate runs first (unless the ramp is cleared).
 */
export async function ramp(
  client: Client,
  target: RolloutTarget,
  buildId: string | undefined,
  percent: number,
  options: RoutingOptions = {},
): Promise<RoutingChange> {
  assertRampPercent(percent);
  checkTarget(target, buildId);
  const identity = options.identity ?? defaultRolloutIdentity();
  const d = await describeDeployment(client, target);
  const previous = d.currentBuildId !== undefined ? { previousCurrentBuildId: d.currentBuildId } : {};
  if (percent === 0) {
    if (!d.ramping) return { changed: false, ...current(d), ...previous };
    await clearRamp(client, target, d, identity);
    return { changed: true, ...current(d), ...previous };
  }
  const build = buildId ?? candidateBuildId(d);
  if (build === undefined) throw new RolloutError('ERR_ROLLOUT_REFUSED', 'no version to ramp: name a build ID');
  requireKnown(d, build);
  if (build === d.currentBuildId) {
    throw new RolloutError('ERR_ROLLOUT_REFUSED', `build ${quoteShort(build)} is already Current: nothing to ramp`);
  }
  if (d.ramping?.buildId === build && d.ramping.percentage === percent)
    return { changed: false, ...current(d), ...previous };
  const checked = await runGate(client, d, build, options);
  await withConflictRetry(
    client,
    target,
    d,
    (now) =>
      client.workflowService.setWorkerDeploymentRampingVersion({
        ...target,
        buildId: build,
        percentage: percent,
        conflictToken: now.conflictToken,
        identity,
      }),
    build,
  );
  return {
    changed: true,
    ...current(d),
    ramping: { buildId: build, percentage: percent },
    ...previous,
    ...(checked !== undefined ? { checked } : {}),
  };
}

function current(d: DeploymentDescription): Pick<RoutingChange, 'currentBuildId' | 'ramping'> {
  return {
    ...(d.currentBuildId !== undefined ? { currentBuildId: d.currentBuildId } : {}),
    ...(d.ramping ? { ramping: d.ramping } : {}),
  };
}

async function makeCurrent(
  client: Client,
  target: RolloutTarget,
  d: DeploymentDescription,
  build: string,
  options: RoutingOptions,
): Promise<RoutingChange> {
  requireKnown(d, build);
  const previous = d.currentBuildId !== undefined ? { previousCurrentBuildId: d.currentBuildId } : {};
  if (build === d.currentBuildId && !d.ramping) return { changed: false, currentBuildId: build, ...previous };
  const identity = options.identity ?? defaultRolloutIdentity();
  const checked = build === d.currentBuildId ? undefined : await runGate(client, d, build, options);
  if (build !== d.currentBuildId) {
    await withConflictRetry(
      client,
      target,
      d,
      (now) =>
        client.workflowService.setWorkerDeploymentCurrentVersion({
          ...target,
          buildId: build,
          conflictToken: now.conflictToken,
          identity,
        }),
      build,
    );
  }
  // Promoting the Ramping version clears its ramp; a ramp of another version stays unless cleared here.
  const after = await describeDeployment(client, target);
  if (after.ramping) await clearRamp(client, target, after, identity);
  return { changed: true, currentBuildId: build, ...previous, ...(checked !== undefined ? { checked } : {}) };
}

/**
 * Makes `buildId` (default: {@link candidateBuildId}) the Current version: every new run goes to it,
 * any ramp is cleared. Pinned runs move at their next continue-as-new (or at once with `wake`).
 */
export async function promote(
  client: Client,
  target: RolloutTarget,
  buildId: string | undefined,
  options: RoutingOptions = {},
): Promise<RoutingChange> {
  checkTarget(target, buildId);
  const d = await describeDeployment(client, target);
  const build = buildId ?? candidateBuildId(d);
  if (build === undefined) throw new RolloutError('ERR_ROLLOUT_REFUSED', 'no version to promote: name a build ID');
  return makeCurrent(client, target, d, build, options);
}

/**
 * Makes the previous Current version ({@link previousCurrentBuildId}) Current again and clears any
 * ramp: the undo of the last promote. Refused when no version was Current before this one.
 */
export async function rollback(
  client: Client,
  target: RolloutTarget,
  options: RoutingOptions = {},
): Promise<RoutingChange> {
  checkTarget(target);
  const d = await describeDeployment(client, target);
  const build = previousCurrentBuildId(d);
  if (build === undefined) {
    throw new RolloutError(
      'ERR_ROLLOUT_REFUSED',
      `deployment ${quoteShort(d.deploymentName)}: no version was Current before ${quoteShort(d.currentBuildId ?? 'unversioned')}: nothing to roll back to`,
    );
  }
  return makeCurrent(client, target, d, build, options);
}
