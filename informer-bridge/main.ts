/**
 * The runnable informer bridge: `tsx informer-bridge/main.ts` (or `node dist/informer-bridge/main.js`).
 * Reads its configuration from the environment (see `config.ts`), serves `/healthz`, `/readyz` and
 * `/metrics`, and shuts down gracefully on SIGTERM/SIGINT (flush, then release the Lease).
 */
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import pino from 'pino';
import { Bridge } from './bridge';
import { parseBridgeConfig } from './config';
import { BridgeMetrics } from './metrics';
import { startHttpServer } from './server';

async function main(): Promise<void> {
  let config;
  try {
    config = parseBridgeConfig(process.env);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(2);
  }
  const log = pino({ level: config.LOG_LEVEL, base: { component: 'informer-bridge', pid: process.pid } });
  const kc = new k8s.KubeConfig();
  if (config.KUBECONFIG) kc.loadFromFile(config.KUBECONFIG);
  else kc.loadFromDefault();
  // Lazy: the bridge starts (and keeps every change) even while Temporal is unavailable.
  const connection = Connection.lazy({
    address: config.TEMPORAL_ADDRESS,
    ...(config.TEMPORAL_API_KEY ? { apiKey: config.TEMPORAL_API_KEY, tls: true } : {}),
  });
  const client = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
  const bridge = new Bridge({
    kc,
    resources: config.HOMEOSTAT_BRIDGE_RESOURCES,
    namespace: config.HOMEOSTAT_BRIDGE_NAMESPACE,
    labelSelector: config.HOMEOSTAT_BRIDGE_LABEL_SELECTOR,
    client,
    taskQueue: config.HOMEOSTAT_TASK_QUEUE,
    log,
    metrics: new BridgeMetrics(true),
    concurrency: config.HOMEOSTAT_BRIDGE_CONCURRENCY,
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
  const { server, port } = await startHttpServer(bridge, config.HOMEOSTAT_BRIDGE_PORT);
  log.info({ port }, 'http listening');
  bridge.start();

  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    void (async () => {
      const flushed = await bridge.stop(config.HOMEOSTAT_BRIDGE_SHUTDOWN_FLUSH_SECONDS * 1000);
      server.close();
      await connection.close().catch(() => {});
      log.info({ flushed }, 'shut down');
      process.exit(0);
    })();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`informer-bridge failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
