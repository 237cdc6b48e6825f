/**
 * The informer bridge process, `homeostat bridge`: configuration from the environment (see
 * `config.ts`); watches the operator's kinds, the kinds they own and the kinds they reference (unless
 * HOMEOSTAT_BRIDGE_RESOURCES says otherwise), serves `/healthz`, `/readyz` and `/metrics`, and shuts
 * down gracefully on SIGTERM/SIGINT (flush, then release the Lease).
 */
import pino from 'pino';
import type { Operator } from '../core/operator';
import { startTracing, traceLogFields } from '../config';
import { loadBridgeConfig } from './config';
import { startBridgeComponent } from './run-bridge';

/** Runs the bridge process for an operator until SIGTERM/SIGINT. */
export async function bridgeMain(operator: Operator): Promise<void> {
  const { config, temporal, tracing } = loadBridgeConfig();
  const log = pino({
    level: config.LOG_LEVEL,
    base: { component: 'informer-bridge', pid: process.pid },
    mixin: traceLogFields,
  });
  await startTracing(tracing, 'homeostat-bridge');
  const running = await startBridgeComponent({ config, temporal, operator, log }).catch((err: unknown) => {
    process.stderr.write(`informer-bridge failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
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
