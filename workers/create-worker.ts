/**
 * Creating homeostat's worker: the Runtime (SDK and Core logs forwarded to pino), a prebuilt workflow
 * bundle (built once per process and entry module), the object workflow and the activities of the
 * given reconcilers on one task queue, and graceful shutdown on SIGINT/SIGTERM.
 */
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import type { PayloadCodec, WorkerDeploymentVersion } from '@temporalio/common';
import {
  bundleWorkflowCode,
  Runtime,
  Worker,
  makeTelemetryFilterString,
  type NativeConnection,
  type WorkflowBundle,
  type WorkflowBundleOption,
} from '@temporalio/worker';
import type { Logger } from 'pino';
import { createActivities } from '../activities/create-activities';
import type { RolloutMode } from '../config/worker-versioning';
import { controllerRuntimeMetricNames, defaultTaskQueue, reconcileMetricNames } from '../core/definitions';
import { assertOperator, type Operator } from '../core/operator';
import { deploymentVersionString, resolveDeploymentVersion } from './deployment-version';
import { establishVersionRouting } from './first-version';
import { PinoTemporalLogger } from './logger';
import { workflowBundleOptions } from './workflow-bundle-options';

export { workflowInterceptorModules } from './workflow-bundle-options';
import { activityTracing, tracingSinks } from './tracing';
import { controllerRuntimeReconcileTimeBuckets, reconcileTimeBuckets } from './metrics';
import { exportReconcileSeries } from './reconcile-metric-series';

/** The workflow entry module: the generic object workflow, which serves every operator. */
export const defaultWorkflowsPath = require.resolve('../workflows');

let runtimeInstalled = false;

/** Options of {@link installRuntime}. */
export interface RuntimeOptions {
  /** Core's own log level. @default 'WARN' */
  readonly coreLevel?: 'ERROR' | 'WARN' | 'INFO' | 'DEBUG';
  /**
   * `host:port` where Core's Prometheus exporter serves the SDK's metrics and the workflows'
   * `metricMeter` metrics (the worker's `/metrics` merges them); unset exports no metrics.
   */
  readonly prometheusBindAddress?: string;
}

/**
 * Installs the Temporal Runtime with logs forwarded to pino (and metrics exported when asked). Only
 * the first call in a process takes effect (the Runtime is a process-wide singleton); returns whether
 * this call installed it.
 */
export function installRuntime(logger: Logger, options: RuntimeOptions = {}): boolean {
  if (runtimeInstalled) return false;
  runtimeInstalled = true;
  try {
    Runtime.install({
      logger: new PinoTemporalLogger(logger.child({ component: 'temporal' })),
      telemetryOptions: {
        logging: { filter: makeTelemetryFilterString({ core: options.coreLevel ?? 'WARN' }), forward: {} },
        ...(options.prometheusBindAddress
          ? {
              metrics: {
                prometheus: {
                  bindAddress: options.prometheusBindAddress,
                  useSecondsForDurations: true,
                  histogramBucketOverrides: {
                    [reconcileMetricNames.time]: reconcileTimeBuckets,
                    [controllerRuntimeMetricNames.time]: controllerRuntimeReconcileTimeBuckets,
                  },
                },
              },
            }
          : {}),
      },
    });
    return true;
  } catch (err) {
    // Already instantiated by someone else (e.g. a test that created a connection first).
    logger.warn({ err }, 'temporal runtime already installed; logs not forwarded to pino');
    return false;
  }
}

/**
 * The workflow bundle built into the package (`npm run bundle` writes `dist/workflow-bundle.js`), when
 * this code runs from a build that has it; workers then start without webpack.
 */
export function packagedWorkflowBundle(): string | undefined {
  const candidates = [join(__dirname, '..', 'workflow-bundle.js'), join(__dirname, '..', 'dist', 'workflow-bundle.js')];
  // Only a bundle next to compiled code: under tsx or jest the sources may be newer than dist/.
  if (!__filename.endsWith('.js')) return undefined;
  return candidates.find((p) => existsSync(p));
}

const bundles = new Map<string, Promise<WorkflowBundle>>();

/**
 * Bundles a workflow entry module once per process (later calls share the result). Workers then
 * start without webpack, and every worker of the process runs identical workflow code.
 */
export function bundleObjectWorkflows(
  workflowsPath: string = defaultWorkflowsPath,
  logger?: Logger,
): Promise<WorkflowBundle> {
  let bundle = bundles.get(workflowsPath);
  if (!bundle) {
    bundle = bundleWorkflowCode({
      ...workflowBundleOptions(workflowsPath),
      ...(logger ? { logger: new PinoTemporalLogger(logger.child({ component: 'bundler' })) } : {}),
    }).then((b) => ({ code: b.code }));
    bundles.set(workflowsPath, bundle);
  }
  return bundle;
}

/** Worker Deployment Versioning of a worker (docs/upgrading.md, "Versioned workers"). */
export interface WorkerVersioningOptions {
  /** @default `deploymentNameFor(operator.name, taskQueue)` (workers/deployment-version.ts) */
  readonly deploymentName?: string;
  /** @default `buildIdFor(…)`: the operator's, homeostat's and the workflow code's versions and the bundle's hash */
  readonly buildId?: string;
  /**
   * `manual`: the version becomes Current only as the deployment's first; later ones wait for
   * `homeostat rollout`. `auto`: it makes itself Current at start (`homeostat dev`, tests).
   * @default 'manual'
   */
  readonly rollout?: RolloutMode;
}

/** Options of {@link createHomeostatWorker}. */
export interface HomeostatWorkerOptions {
  readonly connection: NativeConnection;
  readonly namespace: string;
  /** @default 'homeostat' */
  readonly taskQueue?: string;
  /** A bundle from {@link bundleObjectWorkflows}, or `{ codePath }` of one written to disk. */
  readonly workflowBundle: WorkflowBundleOption;
  /** The operator whose reconcilers' steps this worker runs (checked before the worker is created). */
  readonly operator: Operator;
  readonly kc: k8s.KubeConfig;
  readonly logger: Logger;
  /** Identity shown in the Temporal UI and used as Events' reportingInstance. */
  readonly identity?: string;
  /** How long running activities may finish on shutdown. @default '10 seconds' */
  readonly shutdownGraceTime?: string;
  /** @default 20 */
  readonly maxConcurrentActivityTaskExecutions?: number;
  /** Workflow tasks this worker runs at once. @default the SDK's (40) */
  readonly maxConcurrentWorkflowTaskExecutions?: number;
  /**
   * Object workflows kept in the worker's cache: a cached workflow's next task needs no replay of its
   * history; a cache smaller than the objects a worker serves makes each of their passes replay
   * (README "Sizing"). 0 keeps none. @default the SDK's: (heap limit − 200 MB) × 600 per GB of heap
   */
  readonly maxCachedWorkflows?: number;
  /**
   * The codec between payloads and Temporal (e.g. an `AesGcmPayloadCodec`); it runs outside the
   * workflow sandbox, so the workflow bundle is the same with or without it. @default none
   */
  readonly payloadCodec?: PayloadCodec;
  /**
   * Worker Deployment Versioning: the worker polls as a version of its operator's deployment, the
   * object workflow is PINNED to the version that started it and moves at a continue-as-new. `false`
   * runs an unversioned worker (Temporal servers before 1.29). @default on, with the defaults of
   * {@link WorkerVersioningOptions}
   */
  readonly versioning?: WorkerVersioningOptions | false;
}

/**
 * Creates (does not run) a worker for the object workflow and the reconcilers' activities. A versioned
 * worker (the default) also makes its version Current when it is its deployment's first (or always,
 * with `rollout: 'auto'`) before it returns.
 */
export async function createHomeostatWorker(options: HomeostatWorkerOptions): Promise<Worker> {
  assertOperator(options.operator);
  installRuntime(options.logger);
  const taskQueue = options.taskQueue ?? defaultTaskQueue;
  const versioning = options.versioning === false ? undefined : (options.versioning ?? {});
  const version = versioning
    ? resolveDeploymentVersion({
        operator: options.operator,
        taskQueue,
        workflowBundle: options.workflowBundle,
        ...(versioning.deploymentName !== undefined ? { deploymentName: versioning.deploymentName } : {}),
        ...(versioning.buildId !== undefined ? { buildId: versioning.buildId } : {}),
      })
    : undefined;
  const worker = await createWorker(options, taskQueue, version);
  exportReconcileSeries(Runtime.instance().metricMeter, {
    namespace: options.namespace,
    taskQueue,
    operator: options.operator,
  });
  if (version && versioning) {
    options.logger.info({ deploymentVersion: deploymentVersionString(version) }, 'versioned worker');
    await establishVersionRouting({
      workflowService: options.connection.workflowService,
      namespace: options.namespace,
      version,
      rollout: versioning.rollout ?? 'manual',
      identity: options.identity ?? `${process.pid}@${hostname()}`,
      logger: options.logger,
    });
  }
  return worker;
}

/** `Worker.create` with homeostat's options, versioned as `version` when given. */
function createWorker(
  options: HomeostatWorkerOptions,
  taskQueue: string,
  version: WorkerDeploymentVersion | undefined,
): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue,
    // The object workflow is PINNED: a run finishes on the version that started it and moves to a new
    // one only by continuing as new between passes (workflows/run-handoff.ts). Declared here, as the
    // worker's default, because Temporal refuses a behavior declared by a workflow on an unversioned worker.
    ...(version
      ? { workerDeploymentOptions: { version, useWorkerVersioning: true, defaultVersioningBehavior: 'PINNED' } }
      : {}),
    workflowBundle: options.workflowBundle,
    // Traces (issue 30): spans of traced passes' activities and of the passes themselves; a no-op when
    // tracing is off or the pass had no traced request behind it.
    interceptors: { activity: [activityTracing] },
    sinks: tracingSinks,
    activities: createActivities({
      kc: options.kc,
      operator: options.operator,
      logger: options.logger,
      ...(options.identity ? { reportingInstance: options.identity } : {}),
    }),
    ...(options.identity ? { identity: options.identity } : {}),
    ...(options.payloadCodec ? { dataConverter: { payloadCodecs: [options.payloadCodec] } } : {}),
    shutdownGraceTime: options.shutdownGraceTime ?? '10 seconds',
    maxConcurrentActivityTaskExecutions: options.maxConcurrentActivityTaskExecutions ?? 20,
    ...(options.maxConcurrentWorkflowTaskExecutions
      ? { maxConcurrentWorkflowTaskExecutions: options.maxConcurrentWorkflowTaskExecutions }
      : {}),
    ...(options.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: options.maxCachedWorkflows } : {}),
  });
}

/**
 * Runs a worker until SIGINT or SIGTERM, then shuts it down gracefully (polling stops, running
 * activities get the grace time, the promise resolves once the worker has drained).
 */
export async function runUntilSignalled(worker: Worker, logger: Logger): Promise<void> {
  const stop = (signal: NodeJS.Signals): void => {
    // Once per process: a Ctrl-C reaches every process of the terminal's group, so a worker started
    // by a supervisor in that group gets SIGINT and then the supervisor's SIGTERM; a second
    // shutdown() throws IllegalStateError (the SDK's own signal handler is guarded the same way).
    if (worker.getState() !== 'RUNNING') return;
    logger.info({ signal }, 'worker shutting down');
    worker.shutdown();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await worker.run();
    logger.info({}, 'worker stopped');
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}
