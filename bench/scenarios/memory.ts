/**
 * Scenario 4, memory, each measured in a child process of its own (RSS after two full GCs):
 * homeostat's informer bridge holding every object of a namespace in its cache, against a bare
 * `@kubernetes/client-node` informer holding the same objects; and homeostat's worker before and after
 * a number of object workflows are cached, giving RSS per cached workflow.
 */
import * as k8s from '@kubernetes/client-node';
import { objectWorkflowStartOptions, reconcileRequestedSignal } from '../../core/definitions';
import type { MemorySample } from '../children/measure';
import { spawnChild } from '../children/spawn';
import { type BenchObjectBody, createNamespace, createObject, forEachLimited, ReadyWatch } from '../objects';
import { benchPlan } from '../reconciler';
import { round } from '../stats';
import type { BenchContext } from '../systems';

const MiB = 1024 * 1024;

/** A cache holder's memory. */
export interface CacheMemory {
  /** Objects in its cache when measured. */
  readonly cached: number;
  /** RSS before it listed anything (modules loaded). */
  readonly idleRssMiB: number;
  /** RSS with every object cached. */
  readonly rssMiB: number;
  readonly heapUsedMiB: number;
  /** (RSS loaded − RSS idle) / objects. */
  readonly bytesPerObject: number;
  /** (heap used loaded − heap used idle) / objects, both after full GCs: less noisy than RSS. */
  readonly heapBytesPerObject: number;
  /** The bridge's own estimate of its cache (trimmed objects as JSON, UTF-16). */
  readonly estimatedCacheBytes?: number;
}

/** The result of {@link memoryScenario}. */
export interface MemoryResult {
  /** Objects in the namespace both cache holders watch. */
  readonly objects: number;
  /** Bytes of each object's spec payload. */
  readonly payloadBytes: number;
  /** Creating the objects, for the record: objects per second the API server took. */
  readonly createPerSecond: number;
  readonly bridge: CacheMemory;
  readonly informer: CacheMemory;
  readonly worker: {
    /** Workflows in the worker's cache before and after. */
    readonly cachedBefore: number;
    readonly cachedAfter: number;
    readonly rssBeforeMiB: number;
    readonly rssAfterMiB: number;
    readonly kibPerWorkflow: number;
  };
}

function cacheMemory(m: Record<string, unknown>, objects: number): CacheMemory {
  const idle = m.idle as MemorySample;
  const loaded = m.loaded as MemorySample;
  return {
    cached: Number(m.cached),
    idleRssMiB: round(idle.rss / MiB),
    rssMiB: round(loaded.rss / MiB),
    heapUsedMiB: round(loaded.heapUsed / MiB),
    bytesPerObject: Math.round((loaded.rss - idle.rss) / Math.max(1, objects)),
    heapBytesPerObject: Math.round((loaded.heapUsed - idle.heapUsed) / Math.max(1, objects)),
    ...(typeof m.estimatedCacheBytes === 'number' ? { estimatedCacheBytes: m.estimatedCacheBytes } : {}),
  };
}

/**
 * Runs the memory scenario: `objects` objects for the cache holders, `workflows` object workflows for
 * the worker (on the first of those objects, after a warm-up of 10).
 */
export async function memoryScenario(ctx: BenchContext, objects: number, workflows: number): Promise<MemoryResult> {
  const namespace = `${ctx.runId}-mem`;
  const payloadBytes = 256;
  await createNamespace(ctx.kube, namespace);
  const created: BenchObjectBody[] = new Array<BenchObjectBody>(objects);
  const t0 = Date.now();
  await forEachLimited(objects, 64, async (i) => {
    created[i] = await createObject(ctx.kube, namespace, `obj-${i}`, { payload: 'x'.repeat(payloadBytes) });
  });
  const createPerSecond = round(objects / ((Date.now() - t0) / 1000));
  ctx.progress(`memory: ${objects} objects created (${createPerSecond}/s)`);

  // A Lease held by another identity for a day: the bridge stays a standby and only caches.
  const leaseName = 'bench-memory';
  await ctx.kube.kc.makeApiClient(k8s.CoordinationV1Api).createNamespacedLease({
    namespace,
    body: {
      metadata: { name: leaseName },
      spec: { holderIdentity: 'bench-holder', leaseDurationSeconds: 86_400 },
    },
  });

  const common = { kubeconfig: ctx.kubeconfig, namespace, expected: objects };
  const bridgeChild = spawnChild('bridge-child.ts', {
    ...common,
    temporalAddress: ctx.temporalAddress,
    temporalNamespace: ctx.temporalNamespace,
    leaseName,
  });
  let bridge: CacheMemory;
  try {
    const m = await bridgeChild.next('measured');
    if (m.leader) throw new Error('the memory bridge became leader: it would have signalled every object');
    bridge = cacheMemory(m, objects);
  } finally {
    await bridgeChild.stop();
  }
  ctx.progress(`memory: bridge ${bridge.rssMiB} MiB with ${bridge.cached} objects`);

  const informerChild = spawnChild('informer-child.ts', common);
  let informer: CacheMemory;
  try {
    informer = cacheMemory(await informerChild.next('measured'), objects);
  } finally {
    await informerChild.stop();
  }
  ctx.progress(`memory: informer ${informer.rssMiB} MiB with ${informer.cached} objects`);

  const taskQueue = `${ctx.homeostatQueue}-memory`;
  const workerChild = spawnChild('worker-child.ts', {
    kubeconfig: ctx.kubeconfig,
    temporalAddress: ctx.temporalAddress,
    temporalNamespace: ctx.temporalNamespace,
    taskQueue,
    bundlePath: ctx.homeostatBundlePath,
  });
  const watch = new ReadyWatch(ctx.kube, namespace);
  try {
    await workerChild.next('ready', 120_000);
    await watch.start();
    const reconcile = async (from: number, to: number): Promise<void> => {
      const readies: Promise<number>[] = [];
      await forEachLimited(to - from, 32, async (k) => {
        const obj = created[from + k]!;
        const name = obj.metadata.name!;
        const ready = watch.waitReady(name, 1, 900_000);
        ready.catch(() => {});
        readies.push(ready);
        const ref = { group: benchPlan.group, version: benchPlan.version, kind: benchPlan.kind, namespace, name };
        await ctx.temporal.workflow.signalWithStart('objectWorkflow', {
          ...objectWorkflowStartOptions(ref, taskQueue),
          signal: reconcileRequestedSignal,
          signalArgs: [
            {
              ref,
              uid: obj.metadata.uid!,
              generation: obj.metadata.generation ?? 1,
              resourceVersion: obj.metadata.resourceVersion ?? '',
              reason: 'added',
            },
          ],
        });
      });
      await Promise.all(readies);
      await new Promise((r) => setTimeout(r, 1000)); // last workflow tasks complete
    };
    const warmup = Math.min(10, objects);
    const n = Math.min(workflows, objects - warmup);
    await reconcile(0, warmup);
    workerChild.proc.send({ type: 'measure' });
    const before = await workerChild.next('measured');
    await reconcile(warmup, warmup + n);
    workerChild.proc.send({ type: 'measure' });
    const after = await workerChild.next('measured');
    const rssBefore = (before.memory as MemorySample).rss;
    const rssAfter = (after.memory as MemorySample).rss;
    const cachedBefore = Number(before.cached);
    const cachedAfter = Number(after.cached);
    const worker = {
      cachedBefore,
      cachedAfter,
      rssBeforeMiB: round(rssBefore / MiB),
      rssAfterMiB: round(rssAfter / MiB),
      kibPerWorkflow: round((rssAfter - rssBefore) / 1024 / Math.max(1, cachedAfter - cachedBefore)),
    };
    ctx.progress(`memory: worker ${JSON.stringify(worker)}`);
    return { objects, payloadBytes, createPerSecond, bridge, informer, worker };
  } finally {
    watch.stop();
    await workerChild.stop();
  }
}
