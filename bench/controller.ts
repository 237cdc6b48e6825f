/**
 * Baseline (b), an in-process controller written the usual way, without Temporal: a
 * `@kubernetes/client-node` informer, a work queue that keeps each key at most once (a key that
 * changes while it is being reconciled is queued again after, as client-go's workqueue does), a few
 * workers, and the same reconcile — three no-op steps, then one status merge patch. The object is
 * read from the informer's cache; events whose generation is already observed are skipped
 * (controller-runtime's GenerationChangedPredicate).
 */
import * as k8s from '@kubernetes/client-node';
import { benchPlan } from './reconciler/plan';
import { patchReadyStatus } from './status';

/** A `BenchObject` as the controller reads it. */
export interface BenchObject extends k8s.KubernetesObject {
  spec?: { round?: number; payload?: string };
  status?: { observedGeneration?: number; phase?: string };
}

/** Options of {@link InProcessController}. */
export interface InProcessControllerOptions {
  readonly kc: k8s.KubeConfig;
  /** The namespace it watches. */
  readonly namespace: string;
  /** Reconciles in parallel at most. @default 16 (the bridge's signal concurrency) */
  readonly concurrency?: number;
}

const noop = async (): Promise<void> => {};

/** The in-process controller of the benchmark. */
export class InProcessController {
  /** Reconcile passes run (status writes made). */
  passes = 0;
  private readonly informer: k8s.Informer<BenchObject> & k8s.ObjectCache<BenchObject>;
  private readonly custom: k8s.CustomObjectsApi;
  private readonly queue: string[] = [];
  private readonly queued = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly dirtyWhileProcessing = new Set<string>();
  private active = 0;
  private stopped = false;
  private readonly concurrency: number;

  constructor(private readonly options: InProcessControllerOptions) {
    const { kc, namespace } = options;
    this.concurrency = options.concurrency ?? 16;
    this.custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const coords = { group: benchPlan.group, version: benchPlan.version, plural: benchPlan.plural, namespace };
    const path = `/apis/${benchPlan.group}/${benchPlan.version}/namespaces/${namespace}/${benchPlan.plural}`;
    this.informer = k8s.makeInformer<BenchObject>(
      kc,
      path,
      () => this.custom.listNamespacedCustomObject(coords) as Promise<k8s.KubernetesListObject<BenchObject>>,
    );
    this.informer.on('add', (obj) => this.onChange(obj));
    this.informer.on('update', (obj) => this.onChange(obj));
    // client-node's informer stops on errors; its own example restarts it.
    this.informer.on('error', () => {
      if (!this.stopped) setTimeout(() => void this.informer.start().catch(() => {}), 1000);
    });
  }

  /** Lists, starts watching and reconciling. */
  async start(): Promise<void> {
    await this.informer.start();
  }

  /** Stops watching; running reconciles finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.informer.stop();
  }

  private onChange(obj: BenchObject): void {
    if (obj.metadata?.generation === obj.status?.observedGeneration && obj.status?.phase === 'Ready') return;
    this.add(obj.metadata?.name ?? '');
  }

  private add(key: string): void {
    if (this.stopped) return;
    if (this.processing.has(key)) {
      this.dirtyWhileProcessing.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.queue.push(key);
    this.pump();
  }

  private pump(): void {
    while (this.active < this.concurrency && this.queue.length > 0) {
      const key = this.queue.shift()!;
      this.queued.delete(key);
      this.processing.add(key);
      this.active++;
      void this.reconcile(key)
        .catch(() => setTimeout(() => this.add(key), 200)) // a failed reconcile is queued again
        .finally(() => {
          this.active--;
          this.processing.delete(key);
          if (this.dirtyWhileProcessing.delete(key)) this.add(key);
          this.pump();
        });
    }
  }

  private async reconcile(name: string): Promise<void> {
    const obj = this.informer.get(name, this.options.namespace);
    if (!obj) return; // deleted: nothing to do
    const generation = obj.metadata?.generation ?? 0;
    await noop();
    await noop();
    await noop();
    await patchReadyStatus(this.custom, this.options.namespace, name, generation);
    this.passes++;
  }
}
