/** The Temporal dev server (with its Web UI) on a SQLite file, with homeostat's namespace and search attributes. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { type ManagedProcess, startProcess, waitUntil } from '../processes';
import { type ComponentContext, logFile, readyOrStop } from './context';
import { httpOk } from './http-probes';

/**
 * Typed search attributes homeostat's workflows use (the Temporal UI contract). The same names as
 * core's `searchAttributeKeys`: devstack imports nothing of homeostat, so it states them itself.
 */
export const searchAttributes = {
  HomeostatKind: 'Keyword',
  HomeostatNamespace: 'Keyword',
  HomeostatName: 'Keyword',
  HomeostatPhase: 'Keyword',
  HomeostatGeneration: 'Int',
} as const;

/** The Temporal namespace the devstack creates for homeostat. */
export const temporalNamespace = 'homeostat';

/** Starts the Temporal dev server on a SQLite file and waits until its namespace and search attributes answer. */
export async function startTemporal(ctx: ComponentContext): Promise<ManagedProcess> {
  const dataDir = join(ctx.dir, 'temporal');
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(ctx.ports.temporal),
    '--http-port',
    String(ctx.ports.temporalHttp),
    '--ui-port',
    String(ctx.ports.temporalUi),
    '--metrics-port',
    String(ctx.ports.temporalMetrics),
    '--db-filename',
    join(dataDir, 'temporal.db'),
    '--namespace',
    temporalNamespace,
    '--sqlite-pragma',
    'journal_mode=WAL',
    '--sqlite-pragma',
    'synchronous=OFF',
    // No `system.forceSearchAttributesCacheRefreshOnRead` (the CLI's start-dev sets it): the search
    // attributes are written before the server starts, and with it every start, upsert and listing
    // reads them from persistence, which under the suite's load hits the frontend's persistence rate
    // limit ("System Persistence Max QPS Reached", RESOURCE_EXHAUSTED) and the client retries.
    '--dynamic-config-value',
    'frontend.enableUpdateWorkflowExecution=true',
    '--dynamic-config-value',
    'frontend.enableExecuteMultiOperation=true',
    // Fairness between teams (issue 27, docs/fairness.md): a backlogged task queue dispatches round-robin
    // across the tasks' fairness keys (an object's namespace), weighted. Each partition of a task queue
    // keeps its own fair backlog, so with the default 4 partitions the order across them is only roughly
    // fair; the dev server has one matching host, and one partition makes the order exact (and testable).
    '--dynamic-config-value',
    'matching.enableFairness=true',
    '--dynamic-config-value',
    'matching.numTaskqueueReadPartitions=1',
    '--dynamic-config-value',
    'matching.numTaskqueueWritePartitions=1',
    // Worker Deployment Versioning (issue 26, `homeostat rollout`): drainage is checked 2 s after a
    // version leaves Current/Ramping and every 2 s after (3 min each by default), so tests see
    // Drained in seconds. A poller is remembered from the start of its poll, so the poller history
    // must outlive one long poll (`matching.longPollExpirationInterval`, 1 min) or idle live workers
    // would look gone: 70 s instead of 5 min (a worker that shuts down cleanly is forgotten at once).
    // Durations are strings, as the server's YAML file spells them.
    '--dynamic-config-value',
    'matching.wv.VersionDrainageStatusVisibilityGracePeriod="2s"',
    '--dynamic-config-value',
    'matching.wv.VersionDrainageStatusRefreshInterval="2s"',
    '--dynamic-config-value',
    'matching.PollerHistoryTTL="70s"',
    // Worker Deployment Versioning (issue 26): every test's workers are a deployment of their own (named
    // for their task queue, workers/deployment-version.ts), so a run creates hundreds of deployments;
    // the defaults are 100 each.
    '--dynamic-config-value',
    'matching.maxDeployments=10000',
    '--dynamic-config-value',
    'matching.maxVersionsInDeployment=1000',
    '--dynamic-config-value',
    'matching.maxTaskQueuesInDeploymentVersion=1000',
    '--log-format',
    'json',
    '--log-level',
    'warn',
    ...Object.entries(searchAttributes).flatMap(([k, v]) => ['--search-attribute', `${k}=${v}`]),
  ];
  const proc = startProcess({
    name: 'temporal',
    executable: ctx.binaries.temporal,
    args,
    logFile: logFile(ctx, 'temporal'),
    cwd: dataDir,
  });
  return readyOrStop(proc, async () => {
    await waitUntil('Temporal dev server', () => temporalReady(`127.0.0.1:${ctx.ports.temporal}`), {
      timeoutMs: 90_000,
      proc,
      intervalMs: 300,
    });
    await waitUntil('Temporal Web UI', () => httpOk(`http://127.0.0.1:${ctx.ports.temporalUi}/`), {
      timeoutMs: 30_000,
      proc,
    });
  });
}

async function temporalReady(address: string): Promise<boolean> {
  const connection = await Connection.connect({ address, connectTimeout: 1000 });
  try {
    await connection.workflowService.describeNamespace({ namespace: temporalNamespace });
    const listed = await connection.operatorService.listSearchAttributes({ namespace: temporalNamespace });
    return Object.keys(searchAttributes).every((k) => k in (listed.customAttributes ?? {}));
  } finally {
    await connection.close();
  }
}
