/**
 * The worker process: `homeostat worker` (or `node dist/workers/main.js`). Configuration comes from
 * the environment (see `config.ts`).
 */
import pino from 'pino';
import { builtinReconcilers } from '../reconcilers';
import { loadWorkerConfig } from './config';
import { runWorker } from './run-worker';

const { config, temporal } = loadWorkerConfig();
const logger = pino({ name: 'homeostat-worker', level: config.LOG_LEVEL });

runWorker({
  temporalAddress: temporal.connectionOptions.address,
  connectionOptions: temporal.connectionOptions,
  namespace: temporal.namespace,
  taskQueue: config.HOMEOSTAT_TASK_QUEUE,
  reconcilers: builtinReconcilers,
  logger,
  httpPort: config.HOMEOSTAT_WORKER_PORT,
  maxConcurrentActivityTaskExecutions: config.HOMEOSTAT_WORKER_MAX_CONCURRENT_ACTIVITIES,
  ...(config.KUBECONFIG ? { kubeconfig: config.KUBECONFIG } : {}),
  ...(config.HOMEOSTAT_WORKFLOW_BUNDLE ? { workflowBundlePath: config.HOMEOSTAT_WORKFLOW_BUNDLE } : {}),
  ...(config.HOMEOSTAT_WORKER_IDENTITY ? { identity: config.HOMEOSTAT_WORKER_IDENTITY } : {}),
}).catch((err: unknown) => {
  logger.fatal({ err }, 'worker failed');
  process.exit(1);
});
