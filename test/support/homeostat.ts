/**
 * homeostat itself on the run's stack, for integration tests: the built-in CRDs, and a worker (and
 * optionally an informer bridge) running in this process on a test's own task queue.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { Client } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import { NativeConnection, type Worker } from '@temporalio/worker';
import type { Logger } from 'pino';
import { Bridge, type LeaderElectionOptions } from '../../informer-bridge';
import { builtinOperator } from '../../builtin';
import type { Operator } from '../../core/operator';
import { watchedResourcesFor } from '../../informer-bridge/operator-resources';
import { installOperatorCrds as installCrds } from '../../cli/install-crds';
import { bundleObjectWorkflows, createHomeostatWorker } from '../../workers/create-worker';
import type { TestStack } from './harness';

/** Applies `deploy/crds` (server-side, so repeated calls from several files agree) and waits until established. */
export function installBuiltinCrds(t: TestStack): void {
  const kubectl = (...args: string[]): void => {
    execFileSync(t.stack.kubectl, ['--kubeconfig', t.endpoints.kubeconfig, ...args]);
  };
  kubectl('apply', '--server-side', '-k', join(__dirname, '../../deploy/crds'));
  kubectl(
    'wait',
    '--for=condition=Established',
    'crd/apps.homeostat.dev',
    'crd/postgresdatabases.homeostat.dev',
    'crd/postgresservers.homeostat.dev',
  );
}

/** Installs an operator's CRDs on the run's stack (server-side apply, waits until Established). */
export async function installOperatorCrds(t: TestStack, operator: Operator): Promise<void> {
  await installCrds(t.kc, operator);
}

/** A worker with an operator (the built-in one by default), and a bridge scoped to the test's namespace when asked. */
export interface InProcessHomeostat {
  readonly bridge?: Bridge;
  /** The worker (its status: cached workflows, tasks). */
  readonly worker: Worker;
  /** Stops the bridge, then the worker; idempotent. The harness calls it too, before it closes its client. */
  stop(): Promise<void>;
}

/** Starts homeostat's worker (and bridge) in this process on `taskQueue`. */
export async function startInProcessHomeostat(
  t: TestStack,
  options: {
    taskQueue: string;
    logger: Logger;
    /**
     * `namespace: false` watches every namespace (children of cluster-scoped objects live anywhere);
     * a name watches that namespace. @default the test's namespace
     */
    bridge?:
      | false
      | {
          watchTimeoutSeconds?: number;
          namespace?: false | string;
          resyncIntervalMs?: number;
          /** @default off */
          leaderElection?: LeaderElectionOptions;
        };
    /** Credentials of the worker and the bridge (e.g. their ServiceAccounts'). @default the stack's admin */
    kc?: { readonly worker?: k8s.KubeConfig; readonly bridge?: k8s.KubeConfig };
    /** @default the built-in operator */
    operator?: Operator;
    /** The codec of the worker and of the bridge's Temporal client. @default none */
    payloadCodec?: PayloadCodec;
    /** Regular activities (steps) the worker runs at once. @default the worker's (20) */
    maxConcurrentActivityTaskExecutions?: number;
    /** Object workflows the worker keeps cached. @default the SDK's */
    maxCachedWorkflows?: number;
  },
): Promise<InProcessHomeostat> {
  const operator = options.operator ?? builtinOperator;
  const connection = await NativeConnection.connect({ address: t.endpoints.temporalAddress });
  const worker = await createHomeostatWorker({
    connection,
    namespace: t.endpoints.temporalNamespace,
    taskQueue: options.taskQueue,
    workflowBundle: await bundleObjectWorkflows(),
    operator,
    kc: options.kc?.worker ?? t.kc,
    logger: options.logger,
    ...(options.payloadCodec ? { payloadCodec: options.payloadCodec } : {}),
    ...(options.maxConcurrentActivityTaskExecutions
      ? { maxConcurrentActivityTaskExecutions: options.maxConcurrentActivityTaskExecutions }
      : {}),
    ...(options.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: options.maxCachedWorkflows } : {}),
    // The test's own deployment (named for its task queue), its version Current at once.
    versioning: { rollout: 'auto' },
  });
  const running = worker.run();
  const bridge = options.bridge
    ? new Bridge({
        kc: options.kc?.bridge ?? t.kc,
        resources: await watchedResourcesFor(operator, t.kc),
        operator,
        ...(options.bridge.namespace === false ? {} : { namespace: options.bridge.namespace ?? t.namespace }),
        client: options.payloadCodec
          ? new Client({
              connection: t.connection,
              namespace: t.endpoints.temporalNamespace,
              dataConverter: { payloadCodecs: [options.payloadCodec] },
            })
          : t.temporal,
        taskQueue: options.taskQueue,
        log: options.logger,
        leaderElection: options.bridge.leaderElection ?? false,
        ...(options.bridge.watchTimeoutSeconds ? { watchTimeoutSeconds: options.bridge.watchTimeoutSeconds } : {}),
        ...(options.bridge.resyncIntervalMs ? { resyncIntervalMs: options.bridge.resyncIntervalMs } : {}),
      })
    : undefined;
  bridge?.start();
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      await bridge?.stop();
      worker.shutdown();
      await running;
      await connection.close();
    })());
  // Stopped before the harness closes the client the bridge uses, whatever the test's own hooks do.
  t.defer(stop);
  return { worker, ...(bridge ? { bridge } : {}), stop };
}
