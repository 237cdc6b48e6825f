/**
 * The worker process: `homeostat worker` (or `node dist/workers/main.js`). Configuration comes from
 * the environment (see `config.ts`).
 */
import pino from 'pino';
import { builtinReconcilers } from '../reconcilers';
import { loadWorkerConfig } from './config';
import { runWorker, runWorkerOptionsFrom } from './run-worker';

const { config, temporal } = loadWorkerConfig();
const logger = pino({ name: 'homeostat-worker', level: config.LOG_LEVEL });

runWorker(runWorkerOptionsFrom(config, temporal, { reconcilers: builtinReconcilers, logger })).catch((err: unknown) => {
  logger.fatal({ err }, 'worker failed');
  process.exit(1);
});
