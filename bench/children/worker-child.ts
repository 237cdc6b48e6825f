/**
 * Memory scenario child: homeostat's worker with the benchmark reconciler, on a task queue of its
 * own, loading the prebuilt workflow bundle (no bundler in this process). Answers `measure` with its
 * memory and the number of workflows in its cache.
 */
import * as k8s from '@kubernetes/client-node';
import { NativeConnection } from '@temporalio/worker';
import pino from 'pino';
import { createHomeostatWorker } from '../../workers/create-worker';
import { benchReconciler } from '../reconciler';
import { childOptions, exitWithParent, measureMemory, report } from './measure';

interface Options {
  kubeconfig: string;
  temporalAddress: string;
  temporalNamespace: string;
  taskQueue: string;
  bundlePath: string;
}

async function main(): Promise<void> {
  const opts = childOptions<Options>();
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(opts.kubeconfig);
  const connection = await NativeConnection.connect({ address: opts.temporalAddress });
  const worker = await createHomeostatWorker({
    connection,
    namespace: opts.temporalNamespace,
    taskQueue: opts.taskQueue,
    workflowBundle: { codePath: opts.bundlePath },
    operator: { name: 'bench', reconcilers: [benchReconciler] },
    kc,
    logger: pino({ level: 'warn' }, pino.destination(2)),
    shutdownGraceTime: '1 second',
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
