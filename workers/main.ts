/**
 * The worker process: `tsx workers/main.ts` (or `node dist/workers/main.js`). Configuration comes from
 * the environment (see `config.ts`).
 */
import pino from 'pino';
import { builtinReconcilers } from '../reconcilers';
import { loadWorkerConfig } from './config';
import { runWorker } from './run-worker';

const config = loadWorkerConfig();
const logger = pino({ name: 'homeostat-worker', level: config.LOG_LEVEL });

runWorker({
  temporalAddress: config.TEMPORAL_ADDRESS,
  namespace: config.TEMPORAL_NAMESPACE,
  taskQueue: config.HOMEOSTAT_TASK_QUEUE,
  reconcilers: builtinReconcilers,
  logger,
  httpPort: config.HOMEOSTAT_WORKER_PORT,
  ...(config.KUBECONFIG ? { kubeconfig: config.KUBECONFIG } : {}),
  ...(config.HOMEOSTAT_WORKFLOW_BUNDLE ? { workflowBundlePath: config.HOMEOSTAT_WORKFLOW_BUNDLE } : {}),
  ...(config.HOMEOSTAT_WORKER_IDENTITY ? { identity: config.HOMEOSTAT_WORKER_IDENTITY } : {}),
}).catch((err: unknown) => {
  logger.fatal({ err }, 'worker failed');
  process.exit(1);
});
