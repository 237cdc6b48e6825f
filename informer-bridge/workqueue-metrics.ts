/**
 * controller-runtime's work queue metrics (sigs.k8s.io/controller-runtime `pkg/metrics/workqueue.go`,
 * itself client-go's `workqueue` set) for the bridge's delivery queue, one queue per controller: the
 * `name` and `controller` labels are the primary kind, lowercased (`app`), as controller-runtime's
 * builder names a kind's controller and its queue. An item is "added" when an object gets a pending
 * reconcile request (a merge into a pending one adds nothing, as client-go's dirty set does), "taken"
 * when its signal starts, and "done" when the signal is delivered, dropped or fails (a failure is put
 * back: a retry, and an add).
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ReconcileRequest } from '../core/definitions';
import type { Clock } from './types';

/** client-go's queue latency buckets: `prometheus.ExponentialBuckets(10e-9, 10, 12)`, 10 ns to 1000 s. */
export const workqueueDurationBuckets = Array.from({ length: 12 }, (_, i) => Number((1e-8 * 10 ** i).toPrecision(1)));

/** The controller-runtime controller name of a request: its kind, lowercased. */
export function controllerNameOf(request: ReconcileRequest): string {
  return request.ref.kind.toLowerCase();
}

interface Since {
  readonly controller: string;
  readonly at: number;
}

/** The `workqueue_*` metrics of the bridge's delivery queue, by controller. */
export class WorkqueueMetrics {
  private readonly waiting = new Map<string, Since>();
  private readonly processing = new Map<string, Since>();
  private readonly adds: Counter<'name' | 'controller'>;
  private readonly retries: Counter<'name' | 'controller'>;
  private readonly queueDuration: Histogram<'name' | 'controller'>;
  private readonly workDuration: Histogram<'name' | 'controller'>;

  /**
   * @param registry where the metrics are registered
   * @param clock the bridge's clock
   * @param controllers the controllers whose series are served from the start (the primary kinds)
   */
  constructor(
    registry: Registry,
    private readonly clock: Clock,
    controllers: readonly string[],
  ) {
    const labelNames = ['name', 'controller'] as const;
    const registers = [registry];
    const { waiting, processing } = this;
    const now = () => this.clock.now();
    new Gauge({
      name: 'workqueue_depth',
      help: 'Current depth of workqueue by workqueue and priority',
      labelNames: ['name', 'controller', 'priority'] as const,
      registers,
      collect() {
        this.reset();
        for (const c of controllers) this.set({ name: c, controller: c, priority: '' }, 0);
        for (const { controller: c } of waiting.values()) this.inc({ name: c, controller: c, priority: '' });
      },
    });
    this.adds = new Counter({
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by workqueue',
      labelNames,
      registers,
    });
    this.retries = new Counter({
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue',
      labelNames,
      registers,
    });
    this.queueDuration = new Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested',
      buckets: workqueueDurationBuckets,
      labelNames,
      registers,
    });
    this.workDuration = new Histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes.',
      buckets: workqueueDurationBuckets,
      labelNames,
      registers,
    });
    // Work in progress, by controller: its total seconds and its longest item's, read at scrape time.
    const inProgress = (gauge: Gauge<'name' | 'controller'>, fold: (a: number, b: number) => number) => {
      gauge.reset();
      const t = now();
      const values = new Map<string, number>(controllers.map((c) => [c, 0]));
      for (const p of processing.values())
        values.set(p.controller, fold(values.get(p.controller) ?? 0, (t - p.at) / 1000));
      for (const [c, v] of values) gauge.set({ name: c, controller: c }, v);
    };
    new Gauge({
      name: 'workqueue_unfinished_work_seconds',
      help:
        "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. " +
        'Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.',
      labelNames,
      registers,
      collect() {
        inProgress(this, (a, b) => a + b);
      },
    });
    new Gauge({
      name: 'workqueue_longest_running_processor_seconds',
      help: 'How many seconds has the longest running processor for workqueue been running.',
      labelNames,
      registers,
      collect() {
        inProgress(this, Math.max);
      },
    });
    for (const c of controllers) {
      this.adds.inc({ name: c, controller: c }, 0);
      this.retries.inc({ name: c, controller: c }, 0);
    }
  }

  /** An object got a pending request (a new one, or a failed signal's put back). */
  added(key: string, request: ReconcileRequest): void {
    const controller = controllerNameOf(request);
    this.adds.inc({ name: controller, controller });
    this.waiting.set(key, { controller, at: this.clock.now() });
  }

  /** An object's pending request was taken for delivery. */
  taken(key: string): void {
    const since = this.waiting.get(key);
    if (!since) return;
    this.waiting.delete(key);
    const labels = { name: since.controller, controller: since.controller };
    const at = this.clock.now();
    this.queueDuration.observe(labels, (at - since.at) / 1000);
    this.processing.set(key, { controller: since.controller, at });
  }

  /** An object's signal ended: delivered, dropped, or failed (`retried`: put back for a retry). */
  done(key: string, retried = false): void {
    const since = this.processing.get(key);
    if (!since) return;
    this.processing.delete(key);
    const labels = { name: since.controller, controller: since.controller };
    this.workDuration.observe(labels, (this.clock.now() - since.at) / 1000);
    if (retried) this.retries.inc(labels);
  }
}
