/**
 * The runnable informer bridge: `homeostat bridge` (or `node dist/informer-bridge/main.js`). Reads its
 * configuration from the environment (see `config.ts`), watches the built-in reconcilers' kinds unless
 * HOMEOSTAT_BRIDGE_RESOURCES says otherwise, serves `/healthz`, `/readyz` and `/metrics`, and shuts
 * down gracefully on SIGTERM/SIGINT (flush, then release the Lease).
 */
import pino from 'pino';
import { builtinPlans } from '../reconcilers/builtin-plans';
import { watchedResourcesFor } from '../reconcilers/watched-resources';
import { loadBridgeConfig } from './config';
import { startBridgeComponent } from './run-bridge';

async function main(): Promise<void> {
  const { config, temporal } = loadBridgeConfig();
  const log = pino({ level: config.LOG_LEVEL, base: { component: 'informer-bridge', pid: process.pid } });
  const running = await startBridgeComponent({
    config,
    temporal,
    defaultResources: watchedResourcesFor(Object.values(builtinPlans)),
    log,
  });
  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    void running.stop().then(({ flushed }) => {
      log.info({ flushed }, 'shut down');
      process.exit(0);
    });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`informer-bridge failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
