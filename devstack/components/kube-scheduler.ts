/** kube-scheduler for the whole-cluster stack: binds Pods to kwok's nodes. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type ManagedProcess, startProcess, waitUntil } from '../processes';
import { type ComponentContext, logFile, readyOrStop, requiredBinary, requiredPort } from './context';
import { healthzOk } from './http-probes';
import { kubeconfigPath } from './kube-apiserver';

/** Starts kube-scheduler and waits for `/healthz`. */
export async function startKubeScheduler(ctx: ComponentContext): Promise<ManagedProcess> {
  const certDir = join(ctx.dir, 'kube-scheduler');
  mkdirSync(certDir, { recursive: true, mode: 0o700 });
  const port = requiredPort(ctx.ports.kubeScheduler, 'kube-scheduler');
  const args = [
    `--kubeconfig=${kubeconfigPath(ctx)}`,
    '--leader-elect=false',
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    `--cert-dir=${certDir}`,
    '--profiling=false',
    '--v=1',
  ];
  const proc = startProcess({
    name: 'kube-scheduler',
    executable: requiredBinary(ctx, 'kube-scheduler'),
    args,
    logFile: logFile(ctx, 'kube-scheduler'),
  });
  return readyOrStop(proc, () =>
    waitUntil('kube-scheduler', () => healthzOk(port), { timeoutMs: 60_000, proc, intervalMs: 300 }),
  );
}
