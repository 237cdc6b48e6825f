/**
 * A benchmark worker in a process of its own, as a deployment runs it: homeostat's worker with the
 * benchmark reconciler (its steps local or regular), or the raw baseline's worker, on a task queue of
 * its own, loading a prebuilt workflow bundle (no bundler in this process). Reports `ready` once
 * polling; answers `measure` with its memory and the number of workflows in its cache.
 */
import * as k8s from '@kubernetes/client-node';
import { NativeConnection, Worker } from '@temporalio/worker';
import pino from 'pino';
import { resolveTracing, startTracing } from '../../config';
import { createHomeostatWorker, type HomeostatWorkerOptions } from '../../workers/create-worker';
import { rawWorkerOptions } from '../raw/activities';
import { benchDriftReconciler, benchReconciler, benchRegularReconciler } from '../reconciler';
import type { BenchUpgradeVersion } from '../reconciler/plan';
import { benchUpgradeOperator } from '../reconciler/upgrade';
import { childOptions, exitWithParent, measureMemory, report } from './measure';

/** Which worker the child runs. */
export type WorkerChildSystem = 'homeostat' | 'homeostatRegular' | 'homeostatDrift' | 'raw';

/** The options of a worker child (JSON in its first argument). */
export interface WorkerChildOptions {
  kubeconfig: string;
  temporalAddress: string;
  temporalNamespace: string;
  taskQueue: string;
  /** The workflow bundle of the system (homeostat's, or the raw baseline's). */
  bundlePath: string;
  /** @default 'homeostat' */
  system?: WorkerChildSystem;
  /** The worker's identity in Temporal. */
  identity?: string;
  /**
   * The upgrade scenario: run this version of its operator as the version `buildId` of the Worker
   * Deployment `deploymentName`, routed only by the scenario's promotes (`rollout: 'manual'`).
   */
  upgrade?: { version: BenchUpgradeVersion; deploymentName: string; buildId: string };
  /** Object workflows the worker keeps cached (README "Sizing": at least the objects it serves). @default the SDK's */
  maxCachedWorkflows?: number;
}

/** homeostat's operators, by system. */
const operators = {
  homeostat: { name: 'bench', reconcilers: [benchReconciler] },
  homeostatRegular: { name: 'bench-regular', reconcilers: [benchRegularReconciler] },
  homeostatDrift: { name: 'bench-drift', reconcilers: [benchDriftReconciler] },
};

/** The operator (and versioning) a homeostat worker child runs. */
function homeostatOperator(opts: WorkerChildOptions): Pick<HomeostatWorkerOptions, 'operator' | 'versioning'> {
  if (opts.upgrade) {
    const { version, deploymentName, buildId } = opts.upgrade;
    return { operator: benchUpgradeOperator(version), versioning: { deploymentName, buildId, rollout: 'manual' } };
  }
  const system = opts.system === 'raw' || opts.system === undefined ? 'homeostat' : opts.system;
  return { operator: operators[system] };
}

async function main(): Promise<void> {
  const opts = childOptions<WorkerChildOptions>();
  // Off unless the run set OTEL_* (`--tracing`): then this worker's activities and passes are traced too.
  const tracing = resolveTracing(process.env);
  if ('problems' in tracing) throw new Error(`tracing: ${tracing.problems.join('; ')}`);
  await startTracing(tracing, 'homeostat-worker');
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(opts.kubeconfig);
  const connection = await NativeConnection.connect({ address: opts.temporalAddress });
  const common = {
    connection,
    namespace: opts.temporalNamespace,
    taskQueue: opts.taskQueue,
    workflowBundle: { codePath: opts.bundlePath },
    shutdownGraceTime: '1 second',
    ...(opts.identity ? { identity: opts.identity } : {}),
  };
  const system = opts.system ?? 'homeostat';
  const worker =
    system === 'raw'
      ? await Worker.create({
          ...common,
          ...rawWorkerOptions(kc),
        })
      : await createHomeostatWorker({
          ...common,
          ...homeostatOperator(opts),
          ...(opts.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: opts.maxCachedWorkflows } : {}),
          kc,
          logger: pino({ level: 'warn' }, pino.destination(2)),
        });
  const running = worker.run();
  exitWithParent(async () => {
    worker.shutdown();
    await running;
  });
  process.on('message', (m: { type?: string }) => {
    if (m?.type !== 'measure') return;
    void measureMemory().then((memory) =>
      report({ type: 'measured', memory, cached: worker.getStatus().numCachedWorkflows }),
    );
  });
  report({ type: 'ready' });
}

main().catch((err: unknown) => {
  process.stderr.write(`worker child failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
