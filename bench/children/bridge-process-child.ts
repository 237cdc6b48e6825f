/**
 * A scenario's informer bridge in a process of its own, as a deployment runs it (so its CPU, memory and
 * event loop are its own, and it can be killed and started again): homeostat's bridge for the objects
 * carrying the scenario's label in every namespace, leading alone. The scale scenario's (the bench's
 * drift plan) and the noisy neighbour's (the bench plan, fairness on or off). Reports `ready` once its
 * caches are listed; answers `metrics` with its audit, queue, signal and pass-slot counters and its
 * memory.
 */
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import pino from 'pino';
import { Bridge } from '../../informer-bridge';
import { watchedResourcesFor } from '../../informer-bridge/operator-resources';
import { benchDriftPlan, benchPlan } from '../reconciler/plan';
import { childOptions, exitWithParent, report, until } from './measure';

/** The options of a bridge process child (JSON in its first argument). */
export interface BridgeProcessOptions {
  kubeconfig: string;
  temporalAddress: string;
  temporalNamespace: string;
  taskQueue: string;
  /** The label selector of the scenario's objects. */
  labelSelector: string;
  /** The objects' plan: the bench's with a drift check (scale) or without (noisy neighbour). @default 'drift' */
  plan?: 'drift' | 'bench';
  /** `false`: one first-in, first-out queue (`HOMEOSTAT_FAIRNESS=off`). @default fair across namespaces */
  fairness?: false;
  /** The bridge's `maxPassesInFlight`. @default the bridge's */
  maxPassesInFlight?: number;
  /** The bridge's `maxPassesInFlightPerNamespace`. @default the bridge's */
  maxPassesInFlightPerNamespace?: number;
}

/** What the child answers to `metrics`. */
export interface BridgeProcessMetrics {
  /** Audits of the object workflows finished `ok` since the child started. */
  readonly auditsOk: number;
  /** Objects with an undelivered reconcile request. */
  readonly dirty: number;
  readonly signalsSent: number;
  /** Workflows its audits started (objects that had none running). */
  readonly auditStarts: number;
  readonly cached: number;
  readonly rss: number;
  /** Pass slots freed since the child started, by reason (`done`, `timeout`, `failed`). */
  readonly slotReleases: Readonly<Record<string, number>>;
}

const total = async (metric: { get(): Promise<{ values: { value: number; labels: object }[] }> }, result?: string) =>
  (await metric.get()).values
    .filter((v) => result === undefined || (v.labels as { result?: string }).result === result)
    .reduce((n, v) => n + v.value, 0);

async function main(): Promise<void> {
  const opts = childOptions<BridgeProcessOptions>();
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(opts.kubeconfig);
  const client = new Client({
    connection: await Connection.connect({ address: opts.temporalAddress }),
    namespace: opts.temporalNamespace,
  });
  const plan = opts.plan === 'bench' ? benchPlan : benchDriftPlan;
  const bridge = new Bridge({
    kc,
    resources: await watchedResourcesFor({ reconcilers: [{ plan }] }, kc),
    labelSelector: opts.labelSelector,
    client,
    taskQueue: opts.taskQueue,
    log: pino({ level: 'warn' }, pino.destination(2)),
    leaderElection: false,
    ...(opts.fairness === false ? { fairnessWeights: false as const } : {}),
    ...(opts.maxPassesInFlight !== undefined ? { maxPassesInFlight: opts.maxPassesInFlight } : {}),
    ...(opts.maxPassesInFlightPerNamespace !== undefined
      ? { maxPassesInFlightPerNamespace: opts.maxPassesInFlightPerNamespace }
      : {}),
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
        cached: bridge.cacheOf(plan.group, plan.kind)?.size ?? 0,
        rss: process.memoryUsage().rss,
        slotReleases: Object.fromEntries(
          (await metrics.passSlotReleases.get()).values.map((v) => [String(v.labels.reason), v.value]),
        ),
      } satisfies BridgeProcessMetrics & { type: string });
    })();
  });
  bridge.start();
  await until(() => bridge.ready);
  report({ type: 'ready' });
}

main().catch((err: unknown) => {
  process.stderr.write(`bridge process child failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
