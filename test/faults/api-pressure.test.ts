/**
 * The Kubernetes API pushing back, on a stack of this file's own. homeostat's worker and bridge reach
 * kube-apiserver through a small proxy in this test (which counts the answers, and can answer 429):
 * - 409 conflicts: another writer keeps a condition of its own in the objects' status, and lands a
 *   write between homeostat's read and its resourceVersion-guarded status write every other time;
 * - 429: the proxy answers a quarter of the requests (at random) with 429 and a Retry-After, watches
 *   included;
 * - a burst of invalid objects among valid ones: the invalid ones report phase Invalid with a reason,
 *   the valid ones converge, and both kinds delete cleanly.
 * Each is repeated 3 times; afterwards every object converged to its last generation, each database
 * and role was created exactly once, deletion left no finalizer behind.
 */
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { type DatabaseObject, Databases } from './support/databases';
import { FaultEnv } from './support/fault-env';
import { startKubeProxy, type KubeProxy } from './support/kube-proxy';
import { type HomeostatProcess, sleep } from './support/processes';
import { finishFault } from './support/report';

jest.setTimeout(900_000);

const reps = 3;

describe('the Kubernetes API pushing back (own stack)', () => {
  let env: FaultEnv;
  let proxy: KubeProxy;
  let worker: HomeostatProcess;
  let bridge: HomeostatProcess;

  beforeAll(async () => {
    env = await FaultEnv.start('faults-api');
    proxy = await startKubeProxy(env.kc);
    env.processKubeconfig = proxy.writeKubeconfig(join(env.stack.dir, 'proxy-kubeconfig.json'));
    [worker, bridge] = await Promise.all([env.startWorker(), env.startBridge()]);
    await env.waitLeader(bridge);
  }, 300_000);
  afterAll(async () => {
    await env?.stop();
    await proxy?.close();
  });

  it('given a concurrent writer of status, homeostat retries its conflicting writes and every object converges', async () => {
    const startedAt = Date.now();
    const dbs = new Databases(env, 'cf');
    const conflictsBefore = proxy.counts['409'] ?? 0;
    let writes = 0;
    let seq = 0;
    let lastWriteError: string | undefined;
    const custom = env.custom;
    // Another controller keeps a condition of its own in the status, as a well-behaved controller does:
    // read, add or refresh its condition, write the whole list back with the resourceVersion it read
    // (the CRD's conditions list is atomic, and unknown status fields are pruned). Each write moves the
    // resourceVersion; its own conflicts are retried.
    const co = {
      group: 'homeostat.dev',
      version: 'v1alpha1',
      plural: 'postgresdatabases',
      namespace: env.namespace,
    };
    const writeStatus = async (name: string): Promise<void> => {
      for (let attempt = 0; attempt < 10; attempt++) {
        try {
          const obj = (await custom.getNamespacedCustomObject({ ...co, name })) as DatabaseObject;
          const others = (obj.status?.conditions ?? []).filter((c) => c.type !== 'FaultProbe');
          await custom.patchNamespacedCustomObjectStatus(
            {
              ...co,
              name,
              body: {
                metadata: { resourceVersion: obj.metadata.resourceVersion },
                status: {
                  conditions: [
                    ...others,
                    {
                      type: 'FaultProbe',
                      status: 'True',
                      reason: 'Probed',
                      message: `probe ${++seq}`,
                      lastTransitionTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
                    },
                  ],
                },
              },
            },
            k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
          );
          writes++;
          return;
        } catch (err) {
          if ((err as { code?: number }).code === 409) continue;
          lastWriteError = String(err);
          return;
        }
      }
    };
    // Every other status write of homeostat's finds that the writer got there between its read and its
    // write (so its resourceVersion precondition fails); a background writer adds races of its own.
    const held = new Map<string, number>();
    proxy.beforeStatusPatch(async (path) => {
      // The databases' status only (the PostgresServer they use writes its own status too).
      if (!path.includes('/postgresdatabases/')) return;
      const n = (held.get(path) ?? 0) + 1;
      held.set(path, n);
      if (n % 2 === 1) await writeStatus(path.split('/').at(-2)!);
    });
    let writing = true;
    const background = (async () => {
      while (writing) {
        for (const name of dbs.names) await writeStatus(name);
        await sleep(50);
      }
    })();
    try {
      for (let rep = 0; rep < reps; rep++) {
        await dbs.create(2);
        await dbs.bump();
        await dbs.waitConverged();
      }
    } finally {
      proxy.beforeStatusPatch(undefined);
      writing = false;
      await background;
    }
    const conflicts = (proxy.counts['409'] ?? 0) - conflictsBefore;
    await finishFault({
      fault: 'status-409',
      reps,
      dbs,
      survivors: [worker, bridge],
      startedAt,
      extra: { statusWrites: writes, heldStatusPatches: proxy.counts.heldStatusPatches ?? 0, conflicts409: conflicts },
    });
    expect(lastWriteError).toBeUndefined();
    expect(conflicts).toBeGreaterThan(0);
  });

  it('given the API answering 429 with Retry-After to a quarter of the requests, homeostat backs off and every object converges', async () => {
    const startedAt = Date.now();
    const dbs = new Databases(env, 'tm');
    const before = proxy.counts.injected429 ?? 0;
    proxy.throttle(4, 1);
    try {
      for (let rep = 0; rep < reps; rep++) {
        await dbs.create(2);
        await dbs.bump();
        await dbs.waitConverged();
      }
    } finally {
      proxy.throttle(0);
    }
    const injected = (proxy.counts.injected429 ?? 0) - before;
    await finishFault({
      fault: 'api-429',
      reps,
      dbs,
      survivors: [worker, bridge],
      startedAt,
      extra: { injected429: injected },
    });
    expect(injected).toBeGreaterThan(0);
  });

  it('given a burst of invalid objects among valid ones, the invalid ones report Invalid with a reason and the valid ones converge', async () => {
    const startedAt = Date.now();
    const dbs = new Databases(env, 'iv');
    for (let rep = 0; rep < reps; rep++) {
      // Interleaved, created back to back.
      for (let i = 0; i < 2; i++) {
        await dbs.create(1, true);
        await dbs.create(1);
      }
      await dbs.waitConverged();
      await dbs.waitInvalid();
    }
    await finishFault({ fault: 'invalid-burst', reps, dbs, survivors: [worker, bridge], startedAt });
  });
});
