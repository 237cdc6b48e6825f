/**
 * kwok: simulated nodes for the whole-cluster stack, whose Pods become Running and Ready without a
 * kubelet.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ManagedProcess, startProcess, waitUntil } from '../processes';
import { type ComponentContext, logFile, readyOrStop, requiredBinary } from './context';
import { kubeRequest } from './http-probes';
import { kubeconfigPath } from './kube-apiserver';

/** The label the stack's kwok manages nodes by: a node without it gets no heartbeat (its Lease expires). */
export const kwokNodeLabel = { key: 'homeostat.dev/kwok', value: 'managed' } as const;

/** How long a node's Lease lasts; kwok renews it every quarter of that. */
export const nodeLeaseSeconds = 8;

/** The simulated nodes of a whole-cluster stack. */
export const kwokNodeNames = ['kwok-node-0', 'kwok-node-1', 'kwok-node-2'] as const;

/**
 * Starts kwok with kwokctl's default stages (nodes initialise and renew Leases; Pods bound to them
 * become Running and Ready), registers the simulated nodes {@link kwokNodeNames}, labelled so that
 * kwok manages them, and waits until every one is Ready.
 */
export async function startKwok(ctx: ComponentContext): Promise<ManagedProcess> {
  const kwokDir = join(ctx.dir, 'kwok');
  mkdirSync(kwokDir, { recursive: true, mode: 0o700 });
  const binary = requiredBinary(ctx, 'kwok');
  const stages = join(kwokDir, 'stages.yaml');
  writeFileSync(stages, execFileSync(binary, ['default-stages'], { encoding: 'utf8' }), { mode: 0o600 });
  const args = [
    `--kubeconfig=${kubeconfigPath(ctx)}`,
    `--config=${stages}`,
    `--manage-nodes-with-label-selector=${kwokNodeLabel.key}=${kwokNodeLabel.value}`,
    `--node-lease-duration-seconds=${nodeLeaseSeconds}`,
    '--cidr=10.244.0.0/16',
  ];
  const proc = startProcess({ name: 'kwok', executable: binary, args, logFile: logFile(ctx, 'kwok'), cwd: kwokDir });
  return readyOrStop(proc, async () => {
    for (const name of kwokNodeNames) await registerNode(ctx, name);
    await waitUntil(
      'kwok nodes Ready',
      async () => {
        for (const name of kwokNodeNames) {
          const res = await kubeRequest(ctx, 'GET', `/api/v1/nodes/${name}`);
          const node = res.body as { status?: { conditions?: { type: string; status: string }[] } };
          if (!node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) return false;
        }
        return true;
      },
      { timeoutMs: 60_000, proc, intervalMs: 300 },
    );
  });
}

/** Creates a simulated node (or keeps it when it exists: a restarted kwok finds its nodes again). */
async function registerNode(ctx: ComponentContext, name: string): Promise<void> {
  const resources = { cpu: '32', memory: '256Gi', pods: '110' };
  const res = await kubeRequest(ctx, 'POST', '/api/v1/nodes', {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        [kwokNodeLabel.key]: kwokNodeLabel.value,
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        type: 'kwok',
      },
      annotations: { 'node.alpha.kubernetes.io/ttl': '0' },
    },
    status: { allocatable: resources, capacity: resources },
  });
  if (res.status !== 201 && res.status !== 409) {
    throw new Error(`registering node ${name}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  }
}
