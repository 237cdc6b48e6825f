/**
 * The four systems the scenarios compare, on one stack, in one process: homeostat (its real worker and
 * informer bridge, with the benchmark reconciler's steps as local activities), homeostat with the same
 * steps as regular activities, baseline (a) the raw Temporal workflow started by signal-with-start, and
 * baseline (b) the in-process controller. The three Temporal workers run for the whole benchmark on
 * task queues of their own; a bridge or controller is started per namespace.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import type { Logger } from 'pino';
import { traceContextClientInterceptor } from '../config';
import { Bridge } from '../informer-bridge';
import { watchedResourcesFor } from '../informer-bridge/operator-resources';
import { bundleObjectWorkflows, createHomeostatWorker, installRuntime } from '../workers/create-worker';
import { PinoTemporalLogger } from '../workers/logger';
import { type Child, spawnChild } from './children/spawn';
import type { WorkerChildOptions, WorkerChildSystem } from './children/worker-child';
import { InProcessController } from './controller';
import type { BenchObjectBody, Kube } from './objects';
import { rawWorkerOptions } from './raw/activities';
import { rawReconcileSignal, rawWorkflowType } from './raw/definitions';
import { benchPlan, benchReconciler, benchRegularReconciler } from './reconciler';

/** The systems compared. */
export type SystemName = 'homeostat' | 'homeostatRegular' | 'rawTemporal' | 'controller';

/** All systems, in the order they run in each scenario. */
export const systemNames: readonly SystemName[] = ['homeostat', 'homeostatRegular', 'rawTemporal', 'controller'];

/** Human-readable names of the systems. */
export const systemLabels: Record<SystemName, string> = {
  homeostat: 'homeostat (local steps)',
  homeostatRegular: 'homeostat (regular steps)',
  rawTemporal: 'raw Temporal (a)',
  controller: 'in-process controller (b)',
};

/** What every scenario gets: clients, the running workers, and where to put files. */
export interface BenchContext {
  readonly kube: Kube;
  readonly temporal: Client;
  readonly temporalNamespace: string;
  readonly temporalAddress: string;
  readonly kubeconfig: string;
  /** The stack's PostgreSQL superuser URL (the at-rest scenario's PostgresServer). */
  readonly postgresUrl: string;
  readonly log: Logger;
  /** Task queue of homeostat's worker (local steps). */
  readonly homeostatQueue: string;
  /** Task queue of homeostat's worker whose steps are regular activities. */
  readonly homeostatRegularQueue: string;
  /** Task queue of the raw baseline's worker. */
  readonly rawQueue: string;
  /** homeostat's workflow bundle for the benchmark reconciler, written to disk (for child workers). */
  readonly homeostatBundlePath: string;
  /** A folder outside the repository for this run. */
  readonly workDir: string;
  /** A name prefix unique to this run. */
  readonly runId: string;
  /** The bridges' `maxPassesInFlight` when the run sets it (`--max-passes-in-flight`). @default the bridge's default */
  readonly maxPassesInFlight?: number;
  /** The noisy neighbour's bridge `maxPassesInFlightPerNamespace` (`--max-passes-in-flight-per-namespace`). @default the bridge's default */
  readonly maxPassesInFlightPerNamespace?: number;
  /** PIDs of the stack's servers by component (`temporal`, `kube-apiserver`, `etcd`), whose CPU the scale scenario reads. */
  readonly serverPids?: Readonly<Record<string, number>>;
  /** Progress lines. */
  progress(line: string): void;
}

/** The workers of a run; {@link Workers.stop} shuts them down. */
export interface Workers {
  stop(): Promise<void>;
}

/**
 * Where the benchmark's three Temporal workers run: each in a process of its own, as a deployment runs
 * them (`homeostat worker` apart from the bridge; the baseline's worker apart from what signals it),
 * or all inside the benchmark's process beside the bridges, the controllers and the Ready watches.
 */
export type WorkerPlacement = 'processes' | 'in-process';

/**
 * Bundles both workflow entries and starts homeostat's two workers (local and regular steps) and the
 * raw baseline's worker, placed as `placement` says.
 */
export async function startWorkers(options: {
  kube: Kube;
  temporalAddress: string;
  temporalNamespace: string;
  kubeconfig: string;
  log: Logger;
  workDir: string;
  /** @default 'processes' */
  placement?: WorkerPlacement;
}): Promise<{
  workers: Workers;
  homeostatQueue: string;
  homeostatRegularQueue: string;
  rawQueue: string;
  homeostatBundlePath: string;
}> {
  installRuntime(options.log);
  const suffix = randomBytes(4).toString('hex');
  const homeostatQueue = `bench-homeostat-${suffix}`;
  const homeostatRegularQueue = `bench-homeostat-regular-${suffix}`;
  const rawQueue = `bench-raw-${suffix}`;
  const [homeostatBundle, rawBundle] = await Promise.all([
    bundleObjectWorkflows(undefined, options.log),
    bundleWorkflowCode({
      workflowsPath: require.resolve('./raw/workflow'),
      logger: new PinoTemporalLogger(options.log.child({ component: 'bundler' })),
    }),
  ]);
  const homeostatBundlePath = join(options.workDir, 'homeostat-bench-bundle.js');
  writeFileSync(homeostatBundlePath, homeostatBundle.code);
  const queues = { homeostatQueue, homeostatRegularQueue, rawQueue, homeostatBundlePath };
  if ((options.placement ?? 'processes') === 'processes') {
    const rawBundlePath = join(options.workDir, 'raw-bench-bundle.js');
    writeFileSync(rawBundlePath, rawBundle.code);
    const child = (system: WorkerChildSystem, taskQueue: string, bundlePath: string): Child =>
      spawnChild('worker-child.ts', {
        kubeconfig: options.kubeconfig,
        temporalAddress: options.temporalAddress,
        temporalNamespace: options.temporalNamespace,
        taskQueue,
        bundlePath,
        system,
        identity: `bench-${system}-worker`,
      } satisfies WorkerChildOptions);
    const children = [
      child('homeostat', homeostatQueue, homeostatBundlePath),
      child('homeostatRegular', homeostatRegularQueue, homeostatBundlePath),
      child('raw', rawQueue, rawBundlePath),
    ];
    const stop = async (): Promise<void> => {
      await Promise.allSettled(children.map((c) => c.stop()));
    };
    try {
      await Promise.all(children.map((c) => c.next('ready', 120_000)));
    } catch (err) {
      await stop();
      throw err;
    }
    return { ...queues, workers: { stop } };
  }
  const connection = await NativeConnection.connect({ address: options.temporalAddress });
  // Both homeostat workers run the same code and bundle; only the operator's plan differs (plans
  // travel in history).
  const homeostatWorker = (taskQueue: string, name: string, reconciler: typeof benchReconciler) =>
    createHomeostatWorker({
      connection,
      namespace: options.temporalNamespace,
      taskQueue,
      workflowBundle: homeostatBundle,
      operator: { name, reconcilers: [reconciler] },
      kc: options.kube.kc,
      logger: options.log,
      identity: `${name.replace('bench', 'bench-homeostat')}-${process.pid}`,
    });
  const homeostat = await homeostatWorker(homeostatQueue, 'bench', benchReconciler);
  const homeostatRegular = await homeostatWorker(homeostatRegularQueue, 'bench-regular', benchRegularReconciler);
  const raw = await Worker.create({
    connection,
    namespace: options.temporalNamespace,
    taskQueue: rawQueue,
    workflowBundle: { code: rawBundle.code },
    ...rawWorkerOptions(options.kube.kc),
    identity: `bench-raw-${process.pid}`,
  });
  const running = [homeostat.run(), homeostatRegular.run(), raw.run()];
  return {
    ...queues,
    workers: {
      async stop() {
        homeostat.shutdown();
        homeostatRegular.shutdown();
        raw.shutdown();
        await Promise.allSettled(running);
        await connection.close();
      },
    },
  };
}

/** A system running for one namespace. */
export interface RunningSystem {
  readonly name: SystemName;
  /** Told about every object the benchmark created or updated (the raw baseline signals here). */
  notify(obj: BenchObjectBody): Promise<void>;
  /** Signals delivered to Temporal so far (homeostat's bridge metric; the raw baseline counts its own). */
  signalsSent(): Promise<number>;
  /** Passes run by the in-process controller (the Temporal systems are asked through their workflows). */
  controllerPasses(): number;
  stop(): Promise<void>;
}

/** The raw baseline's workflow ID of an object. */
export function rawWorkflowId(namespace: string, name: string): string {
  return `bench-raw/${namespace}/${name}`;
}

/**
 * Starts homeostat's informer bridge for the `BenchObject`s of `namespace`, delivering to the workers
 * of `taskQueue` (no leader election: one bridge per namespace); resolves once it has listed (or after
 * 15 s).
 */
export async function startBridge(ctx: BenchContext, namespace: string, taskQueue: string): Promise<Bridge> {
  const bridge = new Bridge({
    kc: ctx.kube.kc,
    resources: await watchedResourcesFor({ reconcilers: [{ plan: benchPlan }] }, ctx.kube.kc),
    namespace,
    client: ctx.temporal,
    taskQueue,
    log: ctx.log,
    leaderElection: false,
    ...(ctx.maxPassesInFlight !== undefined ? { maxPassesInFlight: ctx.maxPassesInFlight } : {}),
  });
  bridge.start();
  for (let i = 0; i < 300 && !bridge.ready; i++) await new Promise((r) => setTimeout(r, 50));
  return bridge;
}

/** Starts `name` for the objects of `namespace` (a bridge, a controller, or nothing for the raw baseline). */
export async function startSystem(ctx: BenchContext, name: SystemName, namespace: string): Promise<RunningSystem> {
  if (name === 'homeostat' || name === 'homeostatRegular') {
    const bridge = await startBridge(
      ctx,
      namespace,
      name === 'homeostat' ? ctx.homeostatQueue : ctx.homeostatRegularQueue,
    );
    return {
      name,
      notify: async () => {},
      signalsSent: async () => (await bridge.metrics.signalsSent.get()).values.reduce((n, v) => n + v.value, 0),
      controllerPasses: () => 0,
      stop: async () => {
        await bridge.stop(5_000);
      },
    };
  }
  if (name === 'rawTemporal') {
    let signals = 0;
    return {
      name,
      notify: async (obj) => {
        const objName = obj.metadata.name!;
        await ctx.temporal.workflow.signalWithStart(rawWorkflowType, {
          workflowId: rawWorkflowId(namespace, objName),
          taskQueue: ctx.rawQueue,
          signal: rawReconcileSignal,
          signalArgs: [{ namespace, name: objName, generation: obj.metadata.generation ?? 1 }],
        });
        signals++;
      },
      signalsSent: async () => signals,
      controllerPasses: () => 0,
      stop: async () => {},
    };
  }
  const controller = new InProcessController({ kc: ctx.kube.kc, namespace });
  await controller.start();
  return {
    name,
    notify: async () => {},
    signalsSent: async () => 0,
    controllerPasses: () => controller.passes,
    stop: () => controller.stop(),
  };
}

/** A Temporal client connection for the benchmark. */
export async function connectClient(
  address: string,
  namespace: string,
): Promise<{ client: Client; close(): Promise<void> }> {
  const connection = await Connection.connect({ address });
  // As the bridge's own client (informer-bridge/run-bridge.ts): a traced delivery's context rides in the
  // start's or signal's header; nothing is added when tracing is off.
  const client = new Client({ connection, namespace, interceptors: { workflow: [traceContextClientInterceptor] } });
  return { client, close: () => connection.close() };
}
