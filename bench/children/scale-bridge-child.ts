/**
 * The scale scenario's informer bridge in a process of its own, as a deployment runs it (so its CPU
 * and memory are its own, and it can be killed and started again): homeostat's bridge for the
 * objects carrying the scenario's label in every namespace, leading alone. Reports `ready` once its
 * caches are listed; answers `metrics` with its audit, queue and signal counters and its memory.
 */
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import pino from 'pino';
import { Bridge } from '../../informer-bridge';
import { watchedResourcesFor } from '../../informer-bridge/operator-resources';
import { benchDriftPlan } from '../reconciler/plan';
import { childOptions, exitWithParent, report, until } from './measure';

/** The options of a scale bridge child (JSON in its first argument). */
export interface ScaleBridgeChildOptions {
  kubeconfig: string;
  temporalAddress: string;
  temporalNamespace: string;
  taskQueue: string;
  /** The label selector of the scenario's objects. */
  labelSelector: string;
}

/** What the child answers to `metrics`. */
export interface ScaleBridgeMetrics {
  /** Audits of the object workflows finished `ok` since the child started. */
  readonly auditsOk: number;
  /** Objects with an undelivered reconcile request. */
  readonly dirty: number;
  readonly signalsSent: number;
  /** Workflows its audits started (objects that had none running). */
  readonly auditStarts: number;
  readonly cached: number;
  readonly rss: number;
}

const total = async (metric: { get(): Promise<{ values: { value: number; labels: object }[] }> }, result?: string) =>
  (await metric.get()).values
    .filter((v) => result === undefined || (v.labels as { result?: string }).result === result)
    .reduce((n, v) => n + v.value, 0);

async function main(): Promise<void> {
  const opts = childOptions<ScaleBridgeChildOptions>();
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(opts.kubeconfig);
  const client = new Client({
    connection: await Connection.connect({ address: opts.temporalAddress }),
    namespace: opts.temporalNamespace,
  });
  const bridge = new Bridge({
    kc,
    resources: await watchedResourcesFor({ reconcilers: [{ plan: benchDriftPlan }] }, kc),
    labelSelector: opts.labelSelector,
    client,
    taskQueue: opts.taskQueue,
    log: pino({ level: 'warn' }, pino.destination(2)),
    leaderElection: false,
  });
  exitWithParent(async () => {
    await bridge.stop(5_000);
  });
  process.on('message', (m: { type?: string }) => {
    if (m?.type !== 'metrics') return;
    void (async () => {
      const { metrics } = bridge;
      report({
        type: 'metrics',
        auditsOk: await total(metrics.audits, 'ok'),
        dirty: await total(metrics.dirtyKeys),
        signalsSent: await total(metrics.signalsSent),
        auditStarts: await total(metrics.auditStarts),
        cached: bridge.cacheOf(benchDriftPlan.group, benchDriftPlan.kind)?.size ?? 0,
        rss: process.memoryUsage().rss,
      } satisfies ScaleBridgeMetrics & { type: string });
    })();
  });
  bridge.start();
  await until(() => bridge.ready);
  report({ type: 'ready' });
}

main().catch((err: unknown) => {
  process.stderr.write(`scale bridge child failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
