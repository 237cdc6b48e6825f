/**
 * The worker's Prometheus metrics, served on one `/metrics`:
 * - the reconcile metrics, controller-runtime style, emitted by the object workflow through the
 *   workflow `metricMeter` (replay-safe: nothing is emitted while a history is replayed):
 *   `homeostat_reconcile_total{group,kind,result}`, `homeostat_reconcile_errors_total{group,kind}`,
 *   `homeostat_reconcile_time_seconds{group,kind}` (histogram); and under controller-runtime's names
 *   `controller_runtime_reconcile_total{controller,result}`, `controller_runtime_reconcile_errors_total`,
 *   `controller_runtime_terminal_reconcile_errors_total`, `controller_runtime_reconcile_time_seconds`
 *   (its buckets), `controller` being the lowercased kind;
 * - the Temporal SDK's own metrics (`temporal_*`: task latencies, slots, polls, sticky cache…);
 * both exported by the Core runtime's Prometheus exporter on a loopback port and merged here;
 * - `homeostat_workqueue_depth{name,type}`: the task queue's backlog (tasks waiting for a worker),
 *   read from Temporal's task queue statistics at scrape time;
 * - Node.js process metrics (`homeostat_worker_*`).
 */
import { createServer } from 'node:net';
import type { NativeConnection } from '@temporalio/worker';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';

/** Histogram buckets of `homeostat_reconcile_time_seconds`, in seconds (controller-runtime's range). */
export const reconcileTimeBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/**
 * Histogram buckets of `controller_runtime_reconcile_time_seconds`, in seconds: controller-runtime's own
 * (`pkg/internal/controller/metrics`), so its dashboards' quantiles read the same.
 */
export const controllerRuntimeReconcileTimeBuckets = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75,
  2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

export { controllerRuntimeMetricNames, reconcileMetricNames } from '../core/definitions';

/** A free loopback port for the Core runtime's Prometheus exporter. */
export async function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** Options of {@link WorkerMetrics}. */
export interface WorkerMetricsOptions {
  /** Where the Core runtime's Prometheus exporter listens (`host:port`); unset serves none of its metrics. */
  readonly coreMetricsAddress?: string;
  /** Reads the task queue backlog for `homeostat_workqueue_depth`. */
  readonly taskQueue?: { readonly connection: NativeConnection; readonly namespace: string; readonly name: string };
}

/** The worker's metrics: a prom-client registry plus the Core runtime's exposition. */
export class WorkerMetrics {
  /** Node.js process metrics and the work queue depth. */
  readonly registry = new Registry();

  constructor(private readonly options: WorkerMetricsOptions = {}) {
    collectDefaultMetrics({ register: this.registry, prefix: 'homeostat_worker_' });
    const taskQueue = options.taskQueue;
    if (taskQueue) {
      new Gauge({
        name: 'homeostat_workqueue_depth',
        help: 'Tasks waiting in the Temporal task queue for a worker (approximate backlog), by type',
        labelNames: ['name', 'type'] as const,
        registers: [this.registry],
        async collect() {
          const types = [
            ['workflow', 1],
            ['activity', 2],
          ] as const;
          await Promise.all(
            types.map(async ([type, taskQueueType]) => {
              try {
                const res = await taskQueue.connection.workflowService.describeTaskQueue({
                  namespace: taskQueue.namespace,
                  taskQueue: { name: taskQueue.name, kind: 1 },
                  taskQueueType,
                  reportStats: true,
                });
                const backlog = Number(res.stats?.approximateBacklogCount ?? 0);
                this.set({ name: taskQueue.name, type }, backlog);
              } catch {
                // Temporal unreachable: keep the last value rather than failing the scrape.
              }
            }),
          );
        },
      });
    }
  }

  /** The Prometheus text exposition of everything above. */
  async metrics(): Promise<string> {
    const own = await this.registry.metrics();
    const address = this.options.coreMetricsAddress;
    if (!address) return own;
    try {
      const res = await fetch(`http://${address}/metrics`, { signal: AbortSignal.timeout(2000) });
      const core = res.ok ? await res.text() : '';
      return `${own}\n${core}`;
    } catch {
      return own;
    }
  }

  /** The content type of {@link metrics}. */
  get contentType(): string {
    return this.registry.contentType;
  }
}
