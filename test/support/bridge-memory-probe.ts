/**
 * An informer bridge in a process of its own, for measuring its memory honestly (the test runner's
 * heap is not mixed in): it watches every namespace for one operator of test/fixtures/operators/claims.ts
 * and, on each `measure` message, collects garbage twice and reports its heap and its cache. Started by
 * test/integration/tenant-isolation-bridge-memory.test.ts with `--expose-gc --import tsx`.
 * argv: kubeconfig, Temporal address, Temporal namespace, operator export name.
 */
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import pino from 'pino';
import { Bridge, watchedResourcesFor } from '../../informer-bridge';
import claims, { claimsReferencingSecrets } from '../fixtures/operators/claims';

/** What the probe reports. */
export interface BridgeMemoryReport {
  readonly ready: boolean;
  readonly heapUsed: number;
  readonly cacheObjects: Record<string, number>;
  readonly cacheBytes: Record<string, number>;
}

async function main(): Promise<void> {
  const [kubeconfig, address, namespace, which] = process.argv.slice(2);
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig!);
  const operator = which === 'referencing' ? claimsReferencingSecrets : claims;
  const connection = await Connection.connect({ address: address! });
  const bridge = new Bridge({
    kc,
    resources: await watchedResourcesFor(operator, kc),
    operator,
    client: new Client({ connection, namespace: namespace! }),
    taskQueue: 'bridge-memory-probe',
    log: pino({ level: 'warn' }),
    leaderElection: false,
  });
  bridge.start();
  const byResource = async (gauge: typeof bridge.metrics.cacheBytes): Promise<Record<string, number>> =>
    Object.fromEntries((await gauge.get()).values.map((v) => [String(v.labels.resource), v.value]));
  process.on('message', (msg) => {
    if (msg === 'stop') {
      void bridge.stop().finally(() => process.exit(0));
      return;
    }
    const gc = (globalThis as { gc?: () => void }).gc!;
    gc();
    gc();
    void (async () => {
      const report: BridgeMemoryReport = {
        ready: bridge.ready,
        heapUsed: process.memoryUsage().heapUsed,
        cacheObjects: await byResource(bridge.metrics.cacheObjects),
        cacheBytes: await byResource(bridge.metrics.cacheBytes),
      };
      process.send!(report);
    })();
  });
  process.send!('started');
}

void main().catch((err: unknown) => {
  process.stderr.write(`bridge memory probe: ${String(err)}\n`);
  process.exit(1);
});
