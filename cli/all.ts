/**
 * `homeostat all`: the worker, the informer bridge and the API in one process — for small
 * installations and single-machine setups. One environment configures all three (the union of their
 * variables, checked together); the worker's and the bridge's operations endpoints default to ports
 * 8081 and 8082 so that the API keeps 8080. SIGTERM stops the three gracefully: the bridge flushes
 * its pending requests and releases its Lease, the API finishes in-flight requests, the worker
 * finishes its tasks.
 */
import pino from 'pino';
import { apiEnvSchema } from '../api/config';
import { startApiComponent } from '../api/run-api';
import { loadEnvOrExit, startTracing, traceLogFields } from '../config';
import { bridgeEnvSchema } from '../informer-bridge/config';
import { startBridgeComponent } from '../informer-bridge/run-bridge';
import type { Operator } from '../core/operator';
import { workerEnvSchema } from '../workers/config';
import { runWorker, runWorkerOptionsFrom } from '../workers/run-worker';

/** The environment of `homeostat all`: every variable of the three processes. */
export const allEnvSchema = workerEnvSchema.extend(bridgeEnvSchema.shape).extend(apiEnvSchema.shape).extend({
  LOG_LEVEL: workerEnvSchema.shape.LOG_LEVEL,
});

/** Default ports of `homeostat all`'s operations endpoints (the API keeps HOMEOSTAT_API_PORT). */
export const allDefaultPorts = { HOMEOSTAT_WORKER_PORT: '8081', HOMEOSTAT_BRIDGE_PORT: '8082' } as const;

/** Runs `homeostat all` for an operator until SIGTERM/SIGINT. */
export async function allMain(operator: Operator): Promise<void> {
  await main(operator).catch((err: unknown) => {
    process.stderr.write(`homeostat all failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}

async function main(operator: Operator): Promise<void> {
  const { config, temporal, tracing } = loadEnvOrExit('homeostat all', allEnvSchema, {
    ...allDefaultPorts,
    ...process.env,
  });
  const logger = pino({ name: 'homeostat', level: config.LOG_LEVEL, mixin: traceLogFields });
  await startTracing(tracing, 'homeostat');
  const api = await startApiComponent({ config, temporal, operator });
  const bridge = await startBridgeComponent({
    config,
    temporal,
    operator,
    log: logger.child({ component: 'informer-bridge' }),
  });
  let stopping: Promise<unknown> | undefined;
  const stopOthers = (): void => {
    stopping ??= Promise.all([bridge.stop(), api.stop()]);
  };
  process.once('SIGTERM', stopOthers);
  process.once('SIGINT', stopOthers);
  // Resolves once the worker has been signalled and has finished its tasks.
  await runWorker(
    runWorkerOptionsFrom(config, temporal, {
      operator,
      logger: logger.child({ component: 'worker' }),
    }),
  );
  stopOthers();
  await stopping;
  logger.info({}, 'stopped');
  process.exit(0);
}
