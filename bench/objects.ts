/**
 * Kubernetes plumbing of the benchmark: the `BenchObject` CRD, namespaces, creating and updating
 * objects, and {@link ReadyWatch}, which observes through a watch when objects become `Ready` at a
 * generation (the moment every latency is measured to).
 */
import { performance } from 'node:perf_hooks';
import * as k8s from '@kubernetes/client-node';
import { benchCrd, benchPlan } from './reconciler';

const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

/** Kubernetes clients of one benchmark run. */
export interface Kube {
  readonly kc: k8s.KubeConfig;
  readonly core: k8s.CoreV1Api;
  readonly custom: k8s.CustomObjectsApi;
  readonly apiext: k8s.ApiextensionsV1Api;
}

/** Clients for a kubeconfig file. */
export function kubeFrom(kubeconfig: string): Kube {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  return {
    kc,
    core: kc.makeApiClient(k8s.CoreV1Api),
    custom: kc.makeApiClient(k8s.CustomObjectsApi),
    apiext: kc.makeApiClient(k8s.ApiextensionsV1Api),
  };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Installs the `BenchObject` CRD (idempotent) and waits until it is established. */
export async function installBenchCrd(kube: Kube): Promise<void> {
  const crd = benchCrd();
  const name = (crd.metadata as { name: string }).name;
  try {
    await kube.apiext.createCustomResourceDefinition({
      body: k8s.loadYaml<k8s.V1CustomResourceDefinition>(JSON.stringify(crd)),
    });
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
  }
  for (let i = 0; i < 300; i++) {
    const got = await kube.apiext.readCustomResourceDefinition({ name });
    if (got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) {
      // Established can precede the first successful list by a moment.
      for (let j = 0; j < 50; j++) {
        try {
          await kube.custom.listCustomObjectForAllNamespaces({
            group: benchPlan.group,
            version: benchPlan.version,
            plural: benchPlan.plural,
            limit: 1,
          });
          return;
        } catch {
          await sleep(100);
        }
      }
    }
    await sleep(100);
  }
  throw new Error(`CRD ${name} not established`);
}

/** Creates a namespace labelled as the benchmark's. */
export async function createNamespace(kube: Kube, name: string): Promise<void> {
  await kube.core.createNamespace({ body: { metadata: { name, labels: { 'homeostat.dev/bench': 'true' } } } });
}

/** A `BenchObject` as read from the API server. */
export interface BenchObjectBody {
  apiVersion: string;
  kind: string;
  metadata: k8s.V1ObjectMeta;
  spec?: { round?: number; payload?: string };
  status?: { observedGeneration?: number; phase?: string; conditions?: { type: string; status: string }[] };
}

/** Creates a `BenchObject` (with `labels` and `annotations`, when given). */
export async function createObject(
  kube: Kube,
  namespace: string,
  name: string,
  spec: { round?: number; payload?: string } = {},
  meta: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
): Promise<BenchObjectBody> {
  const metadata = { name, ...meta };
  return (await kube.custom.createNamespacedCustomObject({
    group: benchPlan.group,
    version: benchPlan.version,
    plural: benchPlan.plural,
    namespace,
    body: { apiVersion: `${benchPlan.group}/${benchPlan.version}`, kind: benchPlan.kind, metadata, spec },
  })) as BenchObjectBody;
}

/** Merge-patches a `BenchObject`; returns the object as stored. */
export async function patchObject(
  kube: Kube,
  namespace: string,
  name: string,
  body: { spec?: { round?: number; payload?: string }; metadata?: { annotations?: Record<string, string> } },
): Promise<BenchObjectBody> {
  return (await kube.custom.patchNamespacedCustomObject(
    { group: benchPlan.group, version: benchPlan.version, plural: benchPlan.plural, namespace, name, body },
    mergePatch,
  )) as BenchObjectBody;
}

/** Merge-patches a `BenchObject`'s spec; returns the object as stored (with its new generation). */
export async function patchSpec(
  kube: Kube,
  namespace: string,
  name: string,
  spec: { round?: number; payload?: string },
): Promise<BenchObjectBody> {
  return patchObject(kube, namespace, name, { spec });
}

/** Runs `fn` for 0..n-1 with at most `concurrency` calls in flight. */
export async function forEachLimited(n: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < n) {
      const i = next++;
      await fn(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, lane));
}

interface Waiter {
  readonly name: string;
  /** Whether the object's newest Ready state is what the waiter waits for. */
  readonly wants: (seen: Seen) => boolean;
  readonly resolve: (seen: Seen) => void;
}

/** What a watch saw last of a Ready object: its generation and its true conditions, and when. */
interface Seen {
  readonly generation: number;
  /** When it was first seen Ready at this generation. */
  readonly readyAt: number;
  /** When it was seen in this state (these conditions). */
  readonly at: number;
  readonly conditions: ReadonlySet<string>;
}

/** Whether two sets hold the same members. */
function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((x) => b.has(x));
}

/**
 * Watches the `BenchObject`s of one namespace and tells when an object is `Ready` with
 * `observedGeneration` at least a given generation. Times are `performance.now()` at the moment the
 * watch event arrived. Restarts the watch from the last resourceVersion if the server closes it.
 */
export class ReadyWatch {
  private readonly observed = new Map<string, Seen>();
  private readonly waiters = new Set<Waiter>();
  private abort: AbortController | undefined;
  private resourceVersion = '';
  private stopped = false;

  constructor(
    private readonly kube: Kube,
    private readonly namespace: string,
  ) {}

  private get path(): string {
    return `/apis/${benchPlan.group}/${benchPlan.version}/namespaces/${this.namespace}/${benchPlan.plural}`;
  }

  /** Lists (to learn the current state and resourceVersion) and starts watching. */
  async start(): Promise<void> {
    const list = (await this.kube.custom.listNamespacedCustomObject({
      group: benchPlan.group,
      version: benchPlan.version,
      plural: benchPlan.plural,
      namespace: this.namespace,
    })) as { metadata?: { resourceVersion?: string }; items: BenchObjectBody[] };
    for (const obj of list.items) this.see(obj);
    this.resourceVersion = list.metadata?.resourceVersion ?? '';
    await this.watch();
  }

  private async watch(): Promise<void> {
    const watch = new k8s.Watch(this.kube.kc);
    this.abort = await watch.watch(
      this.path,
      { resourceVersion: this.resourceVersion, allowWatchBookmarks: true },
      (type: string, obj: BenchObjectBody) => {
        if (obj?.metadata?.resourceVersion) this.resourceVersion = obj.metadata.resourceVersion;
        if (type === 'ADDED' || type === 'MODIFIED') this.see(obj);
      },
      () => {
        if (this.stopped) return;
        // Closed by the server (timeout) or an error: a 410 would need a relist; bench runs are short.
        setTimeout(() => void this.watch().catch(() => setTimeout(() => void this.start(), 500)), 100);
      },
    );
  }

  private see(obj: BenchObjectBody): void {
    const name = obj.metadata?.name;
    if (!name || obj.status?.phase !== 'Ready') return;
    const gen = obj.status.observedGeneration ?? 0;
    const conditions = new Set((obj.status.conditions ?? []).filter((c) => c.status === 'True').map((c) => c.type));
    const before = this.observed.get(name);
    if (before && (before.generation > gen || (before.generation === gen && sameSet(before.conditions, conditions)))) {
      return;
    }
    const now = performance.now();
    const readyAt = before?.generation === gen ? before.readyAt : now;
    const seen: Seen = { generation: gen, readyAt, at: now, conditions };
    this.observed.set(name, seen);
    for (const w of this.waiters) {
      if (w.name === name && w.wants(seen)) {
        this.waiters.delete(w);
        w.resolve(seen);
      }
    }
  }

  /** The newest generation observed Ready for `name`, if any. */
  readyGeneration(name: string): number | undefined {
    return this.observed.get(name)?.generation;
  }

  /**
   * Resolves with the `performance.now()` time the object was first seen Ready at `generation` (or
   * later); rejects after `timeoutMs`.
   */
  waitReady(name: string, generation: number, timeoutMs = 120_000): Promise<number> {
    const ready = this.waitFor(name, (seen) => seen.generation >= generation, `at generation ${generation}`, timeoutMs);
    return ready.then((seen) => seen.readyAt);
  }

  /**
   * Resolves with the `performance.now()` time the object was first seen Ready with the condition
   * `type` true (a step's `<Step>Ready`: the plan its last pass ran); rejects after `timeoutMs`.
   */
  waitCondition(name: string, type: string, timeoutMs = 120_000): Promise<number> {
    return this.waitFor(name, (seen) => seen.conditions.has(type), `with ${type}`, timeoutMs).then((seen) => seen.at);
  }

  private waitFor(name: string, wants: (seen: Seen) => boolean, what: string, timeoutMs: number): Promise<Seen> {
    const seen = this.observed.get(name);
    if (seen && wants(seen)) return Promise.resolve(seen);
    return new Promise<Seen>((resolve, reject) => {
      const waiter: Waiter = {
        name,
        wants,
        resolve: (s) => {
          clearTimeout(timer);
          resolve(s);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`${this.namespace}/${name} not Ready ${what} after ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  /** Stops watching. */
  stop(): void {
    this.stopped = true;
    this.abort?.abort();
  }
}
