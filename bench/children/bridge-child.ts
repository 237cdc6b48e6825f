/**
 * Memory scenario child: homeostat's informer bridge watching one namespace, as a standby replica (a
 * Lease held by someone else), so it fills its cache and sends nothing. Reports its memory before
 * starting and once every object is cached.
 */
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import pino from 'pino';
import { Bridge } from '../../informer-bridge';
import { watchedResourcesFor } from '../../informer-bridge/operator-resources';
import { benchPlan } from '../reconciler/plan';
import { childOptions, exitWithParent, measureMemory, report, until } from './measure';

interface Options {
  kubeconfig: string;
  namespace: string;
  temporalAddress: string;
  temporalNamespace: string;
  leaseName: string;
  expected: number;
}

async function main(): Promise<void> {
  const opts = childOptions<Options>();
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(opts.kubeconfig);
  const connection = Connection.lazy({ address: opts.temporalAddress });
  const client = new Client({ connection, namespace: opts.temporalNamespace });
  const idle = await measureMemory();
  const bridge = new Bridge({
    kc,
    resources: await watchedResourcesFor({ reconcilers: [{ plan: benchPlan }] }, kc),
    namespace: opts.namespace,
    client,
    taskQueue: 'bench-memory-unused',
    log: pino({ level: 'warn' }, pino.destination(2)),
    leaderElection: { namespace: opts.namespace, name: opts.leaseName, identity: `bench-memory-${process.pid}` },
  });
  exitWithParent();
  bridge.start();
  const cache = (): ReturnType<Bridge['cacheOf']> => bridge.cacheOf(benchPlan.group, benchPlan.kind);
  const ok = await until(() => bridge.ready && (cache()?.size ?? 0) >= opts.expected);
  const loaded = await measureMemory();
  report({
    type: 'measured',
    ok,
    idle,
    loaded,
    cached: cache()?.size ?? 0,
    estimatedCacheBytes: cache()?.estimatedBytes ?? 0,
    leader: bridge.isLeader,
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`bridge child failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
