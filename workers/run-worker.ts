/**
 * The worker process as a library function: connect, bundle (or load a prebuilt bundle), create the
 * worker and run it until SIGINT/SIGTERM. `homeostat worker` calls it with the operator it was given;
 * tests call it from a child process with their own operators.
 */
import type { PayloadCodec } from '@temporalio/common';
import { NativeConnection, type NativeConnectionOptions } from '@temporalio/worker';
import pino, { type Logger } from 'pino';
import { loadKubeConfig, type TemporalSettings } from '../config';
import type { WorkerConfig } from './config';
import { startWorkerHttpServer } from './http-server';
import { freeLoopbackPort, WorkerMetrics } from './metrics';
import { assertOperator, type Operator } from '../core/operator';
import {
  packagedWorkflowBundle,
  bundleObjectWorkflows,
  createHomeostatWorker,
  defaultWorkflowsPath,
  type WorkerVersioningOptions,
  installRuntime,
  runUntilSignalled,
} from './create-worker';

/** Options of {@link runWorker}. */
export interface RunWorkerOptions {
  readonly temporalAddress: string;
  /** The whole connection (TLS, API key, gRPC metadata), e.g. from `@temporalio/envconfig`; overrides `temporalAddress`. */
  readonly connectionOptions?: NativeConnectionOptions;
  readonly namespace: string;
  readonly taskQueue: string;
  /** Path of a kubeconfig; unset loads the default (in-cluster or ~/.kube/config). */
  readonly kubeconfig?: string;
  /** The operator to run (its reconcilers' steps become this worker's activities). */
  readonly operator: Operator;
  /** The workflow entry module to bundle. @default the generic `workflows/index.ts` */
  readonly workflowsPath?: string;
  /**
   * A prebuilt bundle on disk; when set, nothing is bundled at start.
   * @default the package's `dist/workflow-bundle.js` when it exists and no `workflowsPath` is given
   */
  readonly workflowBundlePath?: string;
  readonly identity?: string;
  readonly logger?: Logger;
  /** Called once the worker polls (e.g. to print a readiness line). */
  readonly onReady?: () => void;
  /**
   * Port of `/healthz`, `/readyz` and `/metrics` (reconcile metrics, the SDK's metrics, the task
   * queue depth); 0 takes any free port; undefined serves none and exports no metrics.
   */
  readonly httpPort?: number;
  /** Activities this worker runs at once. @default 20 */
  readonly maxConcurrentActivityTaskExecutions?: number;
  /** Object workflows kept in the worker's cache (see {@link HomeostatWorkerOptions}). @default the SDK's */
  readonly maxCachedWorkflows?: number;
  /** The codec between payloads and Temporal (HOMEOSTAT_PAYLOAD_KEYS). @default none */
  readonly payloadCodec?: PayloadCodec;
  /** Worker Deployment Versioning; `false` runs an unversioned worker. @default on (see {@link WorkerVersioningOptions}) */
  readonly versioning?: WorkerVersioningOptions | false;
}

/** Runs a worker until it is signalled to stop. */
export async function runWorker(options: RunWorkerOptions): Promise<void> {
  // A worker that cannot run its operator's steps fails here, before it connects or polls.
  assertOperator(options.operator);
  const logger = options.logger ?? pino({ name: 'homeostat-worker' });
  const coreMetricsAddress = options.httpPort === undefined ? undefined : `127.0.0.1:${await freeLoopbackPort()}`;
  const exporting = installRuntime(logger, coreMetricsAddress ? { prometheusBindAddress: coreMetricsAddress } : {});
  const kc = loadKubeConfig(options.kubeconfig);
  const connection = await NativeConnection.connect(options.connectionOptions ?? { address: options.temporalAddress });
  try {
    const prebuilt = options.workflowBundlePath ?? (options.workflowsPath ? undefined : packagedWorkflowBundle());
    const workflowBundle = prebuilt
      ? { codePath: prebuilt }
      : await bundleObjectWorkflows(options.workflowsPath ?? defaultWorkflowsPath, logger);
    const worker = await createHomeostatWorker({
      connection,
      namespace: options.namespace,
      taskQueue: options.taskQueue,
      workflowBundle,
      operator: options.operator,
      kc,
      logger,
      ...(options.identity ? { identity: options.identity } : {}),
      ...(options.maxConcurrentActivityTaskExecutions
        ? { maxConcurrentActivityTaskExecutions: options.maxConcurrentActivityTaskExecutions }
        : {}),
      ...(options.payloadCodec ? { payloadCodec: options.payloadCodec } : {}),
      ...(options.versioning !== undefined ? { versioning: options.versioning } : {}),
      ...(options.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: options.maxCachedWorkflows } : {}),
    });
    logger.info(
      { taskQueue: options.taskQueue, namespace: options.namespace, payloadsEncrypted: !!options.payloadCodec },
      'worker started',
    );
    const http =
      options.httpPort === undefined
        ? undefined
        : await startWorkerHttpServer(
            options.httpPort,
            () => worker.getState() === 'RUNNING',
            new WorkerMetrics({
              ...(exporting && coreMetricsAddress ? { coreMetricsAddress } : {}),
              taskQueue: { connection, namespace: options.namespace, name: options.taskQueue },
            }),
          );
    if (http) logger.info({ port: http.port }, 'http listening');
    const running = runUntilSignalled(worker, logger);
    options.onReady?.();
    try {
      await running;
    } finally {
      http?.server.close();
    }
  } finally {
    await connection.close();
  }
}

/**
 * The {@link RunWorkerOptions} of a production process (`homeostat worker`, `homeostat all`) from its
 * parsed configuration and resolved Temporal connection.
 */
export function runWorkerOptionsFrom(
  config: WorkerConfig,
  temporal: TemporalSettings,
  rest: Pick<RunWorkerOptions, 'operator' | 'logger'>,
): RunWorkerOptions {
  return {
    ...rest,
    temporalAddress: temporal.connectionOptions.address,
    connectionOptions: temporal.connectionOptions,
    namespace: temporal.namespace,
    taskQueue: config.HOMEOSTAT_TASK_QUEUE,
    httpPort: config.HOMEOSTAT_WORKER_PORT,
    maxConcurrentActivityTaskExecutions: config.HOMEOSTAT_WORKER_MAX_CONCURRENT_ACTIVITIES,
    ...(config.HOMEOSTAT_WORKER_MAX_CACHED_WORKFLOWS !== undefined
      ? { maxCachedWorkflows: config.HOMEOSTAT_WORKER_MAX_CACHED_WORKFLOWS }
      : {}),
    ...(config.KUBECONFIG ? { kubeconfig: config.KUBECONFIG } : {}),
    ...(config.HOMEOSTAT_WORKFLOW_BUNDLE ? { workflowBundlePath: config.HOMEOSTAT_WORKFLOW_BUNDLE } : {}),
    ...(config.HOMEOSTAT_WORKER_IDENTITY ? { identity: config.HOMEOSTAT_WORKER_IDENTITY } : {}),
    ...(temporal.payloadCodec ? { payloadCodec: temporal.payloadCodec } : {}),
    versioning: workerVersioningFrom(config),
  };
}

/**
 * The worker's versioning from its configuration: off with `HOMEOSTAT_WORKER_VERSIONING=false`; the
 * deployment name and build ID from `HOMEOSTAT_*`, else the Temporal Worker Controller's `TEMPORAL_*`.
 */
export function workerVersioningFrom(config: WorkerConfig): WorkerVersioningOptions | false {
  if (!config.HOMEOSTAT_WORKER_VERSIONING) return false;
  const deploymentName = config.HOMEOSTAT_DEPLOYMENT_NAME ?? config.TEMPORAL_DEPLOYMENT_NAME;
  const buildId = config.HOMEOSTAT_BUILD_ID ?? config.TEMPORAL_WORKER_BUILD_ID;
  return {
    rollout: config.HOMEOSTAT_ROLLOUT,
    ...(deploymentName !== undefined ? { deploymentName } : {}),
    ...(buildId !== undefined ? { buildId } : {}),
  };
}
