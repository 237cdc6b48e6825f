/**
 * The worker process, `homeostat worker`: configuration from the environment (see `config.ts`), the
 * operator from the CLI (`--operator`, or the built-in one).
 */
import pino from 'pino';
import type { Operator } from '../core/operator';
import { startTracing, traceLogFields } from '../config';
import { loadWorkerConfig } from './config';
import { runWorker, runWorkerOptionsFrom } from './run-worker';

/** Runs the worker process for an operator until SIGTERM/SIGINT. */
export async function workerMain(operator: Operator): Promise<void> {
  const { config, temporal, tracing } = loadWorkerConfig();
  const logger = pino({ name: 'homeostat-worker', level: config.LOG_LEVEL, mixin: traceLogFields });
  await startTracing(tracing, 'homeostat-worker');
  logger.info({ operator: operator.name, kinds: operator.reconcilers.map((r) => r.plan.kind) }, 'operator loaded');
  await runWorker(runWorkerOptionsFrom(config, temporal, { operator, logger })).catch((err: unknown) => {
    logger.fatal({ err }, 'worker failed');
    process.exit(1);
  });
}
