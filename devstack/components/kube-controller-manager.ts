/** kube-controller-manager with the few controllers the whole-cluster stack needs. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type ManagedProcess, startProcess, waitUntil } from '../processes';
import { type ComponentContext, logFile, readyOrStop, requiredBinary, requiredPort } from './context';
import { healthzOk, kubeRequest } from './http-probes';
import { kubeconfigPath } from './kube-apiserver';
import { nodeLeaseSeconds } from './kwok';

/**
 * The controllers the stack's kube-controller-manager runs: what Deployments, namespaces, owners,
 * ServiceAccounts and nodes need, and nothing else (each controller is informers and memory).
 */
export const controllers = [
  'serviceaccount-token-controller',
  'serviceaccount-controller',
  'root-ca-certificate-publisher-controller',
  'namespace-controller',
  'garbage-collector-controller',
  'deployment-controller',
  'replicaset-controller',
  'node-lifecycle-controller',
  'taint-eviction-controller',
  'pod-garbage-collector-controller',
] as const;

/**
 * Starts kube-controller-manager with the controllers in {@link controllers}, signing ServiceAccount
 * tokens with the key kube-apiserver verifies, and waits for `/healthz` and for the `default`
 * ServiceAccount of the `default` namespace (its controllers are syncing).
 */
export async function startKubeControllerManager(ctx: ComponentContext): Promise<ManagedProcess> {
  const certDir = join(ctx.dir, 'kube-controller-manager');
  mkdirSync(certDir, { recursive: true, mode: 0o700 });
  const port = requiredPort(ctx.ports.kubeControllerManager, 'kube-controller-manager');
  const args = [
    `--kubeconfig=${kubeconfigPath(ctx)}`,
    `--controllers=${controllers.join(',')}`,
    `--service-account-private-key-file=${ctx.pki.saKey}`,
    `--root-ca-file=${ctx.pki.caCert}`,
    '--leader-elect=false',
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    `--cert-dir=${certDir}`,
    // Tests create and delete many objects: the default 20 requests/s would throttle the controllers.
    '--kube-api-qps=100',
    '--kube-api-burst=200',
    // A node whose Lease is not renewed for this long is NotReady (default 50 s).
    `--node-monitor-grace-period=${nodeLeaseSeconds * 2}s`,
    '--node-monitor-period=2s',
    '--profiling=false',
    '--v=1',
  ];
  const proc = startProcess({
    name: 'kube-controller-manager',
    executable: requiredBinary(ctx, 'kube-controller-manager'),
    args,
    logFile: logFile(ctx, 'kube-controller-manager'),
  });
  return readyOrStop(proc, async () => {
    await waitUntil('kube-controller-manager', () => healthzOk(port), { timeoutMs: 60_000, proc, intervalMs: 300 });
    await waitUntil(
      'kube-controller-manager (default ServiceAccount)',
      async () => (await kubeRequest(ctx, 'GET', '/api/v1/namespaces/default/serviceaccounts/default')).status === 200,
      { timeoutMs: 60_000, proc, intervalMs: 300 },
    );
  });
}
