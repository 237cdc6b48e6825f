/**
 * The informer bridge as a process component: Temporal client (lazy, so every change is kept while
 * Temporal is unavailable), the bridge, and its `/healthz`, `/readyz`, `/metrics` server. Used by
 * `homeostat bridge` and `homeostat all`.
 */
import { Client, Connection } from '@temporalio/client';
import type { Logger } from 'pino';
import { dataConverterOf, loadKubeConfig, traceContextClientInterceptor, type TemporalSettings } from '../config';
import { Bridge } from './bridge';
import type { BridgeConfig } from './config';
import { fairnessSetting } from '../config/fairness-weights';
import { BridgeMetrics } from './metrics';
import { registerPhaseMetrics } from './phase-metrics';
import { startHttpServer } from './server';
import type { Operator } from '../core/operator';
import { watchedResourcesFor } from './operator-resources';
import { isPrimary } from './types';

/** A running bridge component. */
export interface RunningBridge {
  readonly bridge: Bridge;
  /** Port of `/healthz`, `/readyz` and `/metrics`. */
  readonly port: number;
  /** Flushes pending requests (up to the configured time), releases the Lease, closes the server and connection. */
  stop(): Promise<{ flushed: boolean }>;
}

/**
 * Starts the bridge for an operator: its resources come from the operator, their plurals and scopes
 * from API discovery (a kind the API server does not serve fails the start, naming it), unless
 * HOMEOSTAT_BRIDGE_RESOURCES names them. The operator's `references` map changes of referenced
 * objects to the objects that read them either way.
 */
export async function startBridgeComponent(options: {
  config: BridgeConfig;
  temporal: TemporalSettings;
  operator: Operator;
  log: Logger;
}): Promise<RunningBridge> {
  const { config, temporal, log } = options;
  const kc = loadKubeConfig(config.KUBECONFIG);
  const connection = Connection.lazy(temporal.connectionOptions);
  const client = new Client({
    connection,
    namespace: temporal.namespace,
    ...dataConverterOf(temporal),
    // The active span's context (a delivery's, a request's) rides in the header of what it sends.
    interceptors: { workflow: [traceContextClientInterceptor] },
  });
  const resources = config.HOMEOSTAT_BRIDGE_RESOURCES ?? (await watchedResourcesFor(options.operator, kc));
  log.info(
    { resources: resources.map((r) => `${r.plural}${r.group ? `.${r.group}` : ''}`) },
    config.HOMEOSTAT_BRIDGE_RESOURCES ? 'watching the configured resources' : 'watching discovered resources',
  );
  const bridge = new Bridge({
    kc,
    resources,
    operator: options.operator,
    namespace: config.HOMEOSTAT_BRIDGE_NAMESPACE,
    labelSelector: config.HOMEOSTAT_BRIDGE_LABEL_SELECTOR,
    client,
    taskQueue: config.HOMEOSTAT_TASK_QUEUE,
    fairnessWeights: fairnessSetting(config.HOMEOSTAT_FAIRNESS, config.HOMEOSTAT_FAIRNESS_WEIGHTS),
    log,
    metrics: new BridgeMetrics(true),
    concurrency: config.HOMEOSTAT_BRIDGE_CONCURRENCY,
    maxPassesInFlight: config.HOMEOSTAT_BRIDGE_MAX_PASSES_IN_FLIGHT,
    maxPassesInFlightPerNamespace: config.HOMEOSTAT_BRIDGE_MAX_PASSES_IN_FLIGHT_PER_NAMESPACE,
    passHoldMs: config.HOMEOSTAT_BRIDGE_PASS_HOLD_SECONDS * 1000,
    resyncIntervalMs: config.HOMEOSTAT_BRIDGE_RESYNC_SECONDS * 1000,
    watchTimeoutSeconds: config.HOMEOSTAT_BRIDGE_WATCH_TIMEOUT_SECONDS,
    inactivityTimeoutMs: config.HOMEOSTAT_BRIDGE_INACTIVITY_SECONDS * 1000,
    leaderElection: config.HOMEOSTAT_BRIDGE_LEADER_ELECTION && {
      namespace: config.HOMEOSTAT_BRIDGE_LEASE_NAMESPACE,
      name: config.HOMEOSTAT_BRIDGE_LEASE_NAME,
      identity: config.HOMEOSTAT_BRIDGE_IDENTITY,
      leaseDurationMs: config.HOMEOSTAT_BRIDGE_LEASE_SECONDS * 1000,
      renewDeadlineMs: config.HOMEOSTAT_BRIDGE_RENEW_DEADLINE_SECONDS * 1000,
      retryPeriodMs: config.HOMEOSTAT_BRIDGE_RETRY_PERIOD_SECONDS * 1000,
    },
  });
  // Every resource reports `synced` from the start (0 until its first list), so "not synced" can alert.
  for (const r of resources) bridge.metrics.synced.set({ resource: r.group ? `${r.plural}.${r.group}` : r.plural }, 0);
  registerPhaseMetrics(
    bridge.metrics.registry,
    resources.filter(isPrimary).map((r) => ({
      group: r.group,
      kind: r.kind,
      objects: () => bridge.cacheOf(r.group, r.kind)?.values() ?? [],
    })),
  );
  const { server, port } = await startHttpServer(bridge, config.HOMEOSTAT_BRIDGE_PORT);
  log.info({ port }, 'http listening');
  bridge.start();
  return {
    bridge,
    port,
    async stop() {
      const flushed = await bridge.stop(config.HOMEOSTAT_BRIDGE_SHUTDOWN_FLUSH_SECONDS * 1000);
      server.close();
      await connection.close().catch(() => {});
      return { flushed };
    },
  };
}
