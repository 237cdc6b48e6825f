/**
 * Per-test access to the run's real stack: a fresh Kubernetes namespace, a Kubernetes client, a
 * Temporal client and the PostgreSQL URL. Call {@link useStack} at the top of a describe block.
 */
import { randomBytes } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { Stack, type StackEndpoints } from '../../devstack';

/** What a test gets from {@link useStack}. */
export interface TestStack {
  /** The run's stack (components can be stopped and started for fault tests). */
  readonly stack: Stack;
  readonly endpoints: StackEndpoints;
  readonly kc: k8s.KubeConfig;
  readonly core: k8s.CoreV1Api;
  readonly custom: k8s.CustomObjectsApi;
  readonly apiext: k8s.ApiextensionsV1Api;
  readonly connection: Connection;
  readonly temporal: Client;
  /** A namespace created for this describe block, deleted after it. */
  readonly namespace: string;
  /** A name unique to this test run, with a prefix. */
  unique(prefix: string): string;
  /**
   * Registers a cleanup that runs after the describe block's tests, before the namespace is deleted
   * and the Temporal connection closed; cleanups run last-registered first. Whatever uses
   * {@link TestStack.connection} (a bridge, a worker's client) must stop through one: jest-circus runs
   * a block's `afterAll` hooks in declaration order, so a test's own `afterAll` would run after this
   * harness had closed the connection under it.
   */
  defer(cleanup: () => Promise<void> | void): void;
}

/** A lowercase random suffix. */
export function randomSuffix(bytes = 4): string {
  return randomBytes(bytes).toString('hex');
}

/**
 * Creates a namespace `<prefix>-<random>` labelled as a test's (`homeostat.dev/test: true`).
 * @returns its name
 */
export async function createTestNamespace(core: k8s.CoreV1Api, prefix = 't'): Promise<string> {
  const name = `${prefix}-${randomSuffix()}`;
  await core.createNamespace({ body: { metadata: { name, labels: { 'homeostat.dev/test': 'true' } } } });
  return name;
}

/** Attaches to the run's stack in beforeAll and cleans up in afterAll. Read the result inside tests. */
export function useStack(): TestStack {
  const ctx = {} as { -readonly [K in keyof TestStack]: TestStack[K] };
  const cleanups: (() => Promise<void> | void)[] = [];
  ctx.defer = (cleanup) => {
    cleanups.push(cleanup);
  };
  beforeAll(async () => {
    const name = process.env.HOMEOSTAT_TEST_STACK;
    if (!name) throw new Error('HOMEOSTAT_TEST_STACK is not set: run integration tests through jest (global setup)');
    ctx.stack = await Stack.attach(name);
    ctx.endpoints = ctx.stack.endpoints;
    ctx.kc = new k8s.KubeConfig();
    ctx.kc.loadFromFile(ctx.endpoints.kubeconfig);
    ctx.core = ctx.kc.makeApiClient(k8s.CoreV1Api);
    ctx.custom = ctx.kc.makeApiClient(k8s.CustomObjectsApi);
    ctx.apiext = ctx.kc.makeApiClient(k8s.ApiextensionsV1Api);
    ctx.connection = await Connection.connect({ address: ctx.endpoints.temporalAddress });
    ctx.temporal = new Client({ connection: ctx.connection, namespace: ctx.endpoints.temporalNamespace });
    ctx.namespace = `t-${randomSuffix()}`;
    ctx.unique = (prefix: string) => `${prefix}-${randomSuffix()}`;
    await ctx.core.createNamespace({
      body: { metadata: { name: ctx.namespace, labels: { 'homeostat.dev/test': 'true' } } },
    });
  });
  afterAll(async () => {
    const failures: unknown[] = [];
    for (const cleanup of cleanups.reverse()) {
      await Promise.resolve()
        .then(cleanup)
        .catch((err: unknown) => failures.push(err));
    }
    // The namespace controller empties and removes it in the background; nothing waits for that.
    await ctx.core?.deleteNamespace({ name: ctx.namespace }).catch(() => {});
    await ctx.connection?.close();
    if (failures.length) throw new AggregateError(failures, `${failures.length} cleanup(s) failed`);
  });
  return ctx;
}
