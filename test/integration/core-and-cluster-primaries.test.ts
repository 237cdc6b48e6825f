/**
 * Primaries homeostat does not define and primaries without a namespace, on the real stack, with team
 * operators written against the public API: every `Namespace` carrying a label (a core kind: its
 * status is Kubernetes', so homeostat reports through annotations, Events and the workflow), and a
 * cluster-scoped CRD owning a cluster-scoped child (a Namespace) and a namespaced child in it.
 */
import type { V1ConfigMap, V1Namespace } from '@kubernetes/client-node';
import * as k8s from '@kubernetes/client-node';
import pino from 'pino';
import { z } from 'zod';
import { stateQuery, workflowIdFor } from '../../core/definitions';
import { defineOperator, definePlan, defineReconciler } from '../../reconcilers';
import { randomSuffix, useStack } from '../support/harness';
import { installOperatorCrds, type InProcessHomeostat, startInProcessHomeostat } from '../support/homeostat';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
const finalizer = 'homeostat.dev/finalizer';
const fastRetry = { initialInterval: '200 milliseconds', maximumInterval: '1 second' };

/** Polls `fn` every 100 ms until it returns a value; throws after `timeoutMs` with `what` and the last error. */
async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  let lastErr: unknown;
  for (const deadline = Date.now() + timeoutMs; ; await sleep(100)) {
    const value = await fn().catch((err: unknown) => {
      lastErr = err;
      return undefined;
    });
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (${String(lastErr)})`);
  }
}

describe('a core kind as primary: every Namespace carrying a label', () => {
  let homeostat: InProcessHomeostat | undefined;
  // Declared before useStack's own afterAll, so the bridge flushes while the Temporal connection is open.
  afterAll(async () => {
    await homeostat?.stop();
  });
  const t = useStack();
  const managed = 'platform.example.com/managed';
  // A value of this run only: namespaces of other tests (and runs) are never selected.
  const selectorValue = randomSuffix();

  const tenantPlan = definePlan({
    group: '',
    version: 'v1',
    kind: 'Namespace',
    plural: 'namespaces',
    scope: 'Cluster',
    owns: [{ apiVersion: 'v1', kind: 'ConfigMap' }],
    steps: [{ name: 'tenant-config', summary: 'write the tenant ConfigMap', retry: fastRetry }],
    cleanup: [{ name: 'remove-config', retry: fastRetry }],
  });
  const tenants = defineOperator({
    name: 'tenants',
    reconcilers: [
      defineReconciler({
        plan: tenantPlan,
        schema: z.object({ finalizers: z.array(z.string()).optional() }),
        crd: false,
        labelSelector: `${managed}=${selectorValue}`,
        steps: {
          'tenant-config': async ({ object, children }) => {
            await children.apply<V1ConfigMap>({
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name: 'tenant-info', namespace: object.name },
              data: { tier: object.labels['platform.example.com/tier'] ?? 'standard' },
            });
            return { message: `tenant ${object.name} configured` };
          },
        },
        cleanup: {
          'remove-config': async ({ object, children }) => {
            await children.delete({
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name: 'tenant-info', namespace: object.name },
            });
          },
        },
      }),
    ],
  });

  beforeAll(async () => {
    homeostat = await startInProcessHomeostat(t, {
      taskQueue: `tenants-${randomSuffix()}`,
      logger: pino({ level: 'warn' }),
      operator: tenants,
      bridge: { namespace: false },
    });
  }, 120_000);

  const createNamespace = (name: string, labels: Record<string, string>) =>
    t.core.createNamespace({ body: { metadata: { name, labels } } });
  const tenantConfig = (namespace: string) => t.core.readNamespacedConfigMap({ name: 'tenant-info', namespace });
  const workflowOf = (name: string) =>
    t.temporal.workflow.getHandle(workflowIdFor({ group: '', kind: 'Namespace', name }));

  it('given a labelled and an unlabelled Namespace, only the labelled one is reconciled: its ConfigMap written, Ready in annotations, status left to Kubernetes', async () => {
    const [tenant, bystander] = [`tenant-${randomSuffix()}`, `bystander-${randomSuffix()}`];
    await createNamespace(tenant, { [managed]: selectorValue, 'platform.example.com/tier': 'gold' });
    await createNamespace(bystander, { [managed]: 'someone-else' });

    const ready = await until('the tenant Namespace to be Ready', async () => {
      const ns = await t.core.readNamespace({ name: tenant });
      return ns.metadata?.annotations?.['homeostat.dev/phase'] === 'Ready' ? ns : undefined;
    });
    expect(ready.metadata?.finalizers).toContain(finalizer);
    expect(ready.metadata?.annotations?.['homeostat.dev/observed-generation']).toBe('0');
    const conditions = JSON.parse(ready.metadata?.annotations?.['homeostat.dev/conditions'] ?? '[]') as {
      type: string;
      status: string;
      lastTransitionTime: string;
    }[];
    expect(conditions.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True' });
    expect(conditions.every((c) => c.lastTransitionTime)).toBe(true);
    expect(ready.status?.phase).toBe('Active'); // Kubernetes' status is untouched
    const config = await tenantConfig(tenant);
    expect(config.data).toEqual({ tier: 'gold' });
    expect(config.metadata?.ownerReferences).toEqual([
      expect.objectContaining({
        apiVersion: 'v1',
        kind: 'Namespace',
        name: tenant,
        uid: ready.metadata?.uid,
        controller: true,
      }),
    ]);
    // Its own ConfigMap's creation asks for one more pass (child-changed): wait until the passes settle.
    const state = await until('the passes to settle', async () => {
      const s = await workflowOf(tenant).query(stateQuery);
      return !s.reconciling && !s.pending ? s : undefined;
    });
    expect(state.phase).toBe('Ready');
    expect(state.lastOutcome?.steps['tenant-config']?.message).toBe(`tenant ${tenant} configured`);

    // The bystander: no ConfigMap, nothing written, no workflow.
    await sleep(1_000);
    await expect(tenantConfig(bystander)).rejects.toMatchObject({ code: 404 });
    const other = await t.core.readNamespace({ name: bystander });
    expect(other.metadata?.finalizers ?? []).not.toContain(finalizer);
    expect(Object.keys(other.metadata?.annotations ?? {}).filter((k) => k.startsWith('homeostat.dev/'))).toEqual([]);
    await expect(workflowOf(bystander).describe()).rejects.toMatchObject({ name: 'WorkflowNotFoundError' });

    // Homeostat's own writes (annotations, finalizer) do not make the bridge signal again: the passes settle.
    await sleep(2_000);
    const settled = await workflowOf(tenant).query(stateQuery);
    await sleep(3_000);
    expect((await workflowOf(tenant).query(stateQuery)).passes).toBe(settled.passes);
  }, 120_000);

  it('given its ConfigMap deleted, the cluster-scoped Namespace gets it back (child-changed through a cluster-scoped owner)', async () => {
    const tenant = `tenant-${randomSuffix()}`;
    await createNamespace(tenant, { [managed]: selectorValue });
    await until('the ConfigMap', () => tenantConfig(tenant));
    await t.core.deleteNamespacedConfigMap({ name: 'tenant-info', namespace: tenant });
    const back = await until('the ConfigMap back', () => tenantConfig(tenant), 20_000);
    expect(back.data).toEqual({ tier: 'standard' });
  }, 120_000);

  it('given the label removed, homeostat lets go: finalizer and status annotations removed, workflow finished; given it deleted while labelled, cleanup runs and the finalizer goes', async () => {
    const [released, deleted] = [`released-${randomSuffix()}`, `deleted-${randomSuffix()}`];
    await createNamespace(released, { [managed]: selectorValue });
    await createNamespace(deleted, { [managed]: selectorValue });
    for (const name of [released, deleted]) {
      await until(`${name} Ready`, async () =>
        (await t.core.readNamespace({ name })).metadata?.annotations?.['homeostat.dev/phase'] === 'Ready'
          ? true
          : undefined,
      );
    }

    await t.core.patchNamespace({ name: released, body: { metadata: { labels: { [managed]: null } } } }, mergePatch);
    const let_go = await until(
      'the label-less Namespace to be released',
      async () => {
        const ns = await t.core.readNamespace({ name: released });
        return !(ns.metadata?.finalizers ?? []).includes(finalizer) ? ns : undefined;
      },
      20_000,
    );
    expect(Object.keys(let_go.metadata?.annotations ?? {}).filter((k) => k.startsWith('homeostat.dev/'))).toEqual([]);
    const description = await until(
      'the workflow to finish',
      async () => {
        const d = await workflowOf(released).describe();
        return d.status.name === 'COMPLETED' ? d : undefined;
      },
      20_000,
    );
    expect(description.status.name).toBe('COMPLETED');

    // No namespace controller runs here, so the Namespace stays Terminating; homeostat's part is done.
    await t.core.deleteNamespace({ name: deleted });
    const finalized = await until(
      'cleanup and the finalizer removed',
      async () => {
        const ns: V1Namespace = await t.core.readNamespace({ name: deleted });
        return !(ns.metadata?.finalizers ?? []).includes(finalizer) ? ns : undefined;
      },
      30_000,
    );
    expect(finalized.metadata?.deletionTimestamp).toBeTruthy();
    await expect(tenantConfig(deleted)).rejects.toMatchObject({ code: 404 });
  }, 120_000);
});

describe('a cluster-scoped CRD as primary, owning a cluster-scoped child and a namespaced child in it', () => {
  let homeostat: InProcessHomeostat | undefined;
  // Declared before useStack's own afterAll, so the bridge flushes while the Temporal connection is open.
  afterAll(async () => {
    await homeostat?.stop();
  });
  const t = useStack();
  const group = `landscapes-${randomSuffix(3)}.example.com`;

  const landscapePlan = definePlan({
    group,
    version: 'v1',
    kind: 'Landscape',
    plural: 'landscapes',
    scope: 'Cluster',
    owns: [
      { apiVersion: 'v1', kind: 'Namespace' },
      { apiVersion: 'v1', kind: 'ConfigMap' },
    ],
    steps: [
      { name: 'namespace', retry: fastRetry },
      { name: 'greeting', dependsOn: ['namespace'], retry: fastRetry },
    ],
  });
  const landscapes = defineOperator({
    name: 'landscapes',
    reconcilers: [
      defineReconciler({
        plan: landscapePlan,
        schema: z.object({ greeting: z.string().max(100) }),
        steps: {
          namespace: async ({ object, children }) => {
            const ns = await children.apply<V1Namespace>({
              apiVersion: 'v1',
              kind: 'Namespace',
              metadata: { name: `${object.name}-home` },
            });
            return { outputs: { namespace: ns.metadata?.name ?? '' } };
          },
          greeting: async ({ results, spec, children }) => {
            await children.apply<V1ConfigMap>({
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name: 'greeting', namespace: String(results.namespace?.namespace) },
              data: { greeting: spec.greeting },
            });
          },
        },
      }),
    ],
  });

  beforeAll(async () => {
    await installOperatorCrds(t, landscapes);
    homeostat = await startInProcessHomeostat(t, {
      taskQueue: `landscapes-${randomSuffix()}`,
      logger: pino({ level: 'warn' }),
      operator: landscapes,
      bridge: { namespace: false },
    });
  }, 120_000);

  interface Landscape {
    metadata: { name: string; uid: string; generation: number; namespace?: string };
    status?: { phase?: string; observedGeneration?: number };
  }
  const get = async (name: string): Promise<Landscape> =>
    (await t.custom.getClusterCustomObject({ group, version: 'v1', plural: 'landscapes', name })) as Landscape;

  it('given a Landscape, it becomes Ready in its status, owns its Namespace and the ConfigMap in it, gets a deleted ConfigMap back and follows spec changes', async () => {
    const name = `meadow-${randomSuffix()}`;
    await t.custom.createClusterCustomObject({
      group,
      version: 'v1',
      plural: 'landscapes',
      body: { apiVersion: `${group}/v1`, kind: 'Landscape', metadata: { name }, spec: { greeting: 'neigh' } },
    });
    const ready = await until('the Landscape Ready', async () => {
      const l = await get(name);
      return l.status?.phase === 'Ready' && l.status.observedGeneration === 1 ? l : undefined;
    });
    expect(ready.metadata.namespace).toBeUndefined();
    const owner = expect.objectContaining({ kind: 'Landscape', name, uid: ready.metadata.uid, controller: true });
    const home = await t.core.readNamespace({ name: `${name}-home` });
    expect(home.metadata?.ownerReferences).toEqual([owner]);
    const greeting = await t.core.readNamespacedConfigMap({ name: 'greeting', namespace: `${name}-home` });
    expect(greeting.data).toEqual({ greeting: 'neigh' });
    expect(greeting.metadata?.ownerReferences).toEqual([owner]);
    const state = await t.temporal.workflow
      .getHandle(workflowIdFor({ group, kind: 'Landscape', name }))
      .query(stateQuery);
    expect(state.ref).toMatchObject({ kind: 'Landscape', name });
    expect(state.ref.namespace || '').toBe('');

    await t.core.deleteNamespacedConfigMap({ name: 'greeting', namespace: `${name}-home` });
    await until(
      'the ConfigMap back',
      () => t.core.readNamespacedConfigMap({ name: 'greeting', namespace: `${name}-home` }),
      20_000,
    );

    await t.custom.patchClusterCustomObject(
      { group, version: 'v1', plural: 'landscapes', name, body: { spec: { greeting: 'whinny' } } },
      mergePatch,
    );
    await until('the new greeting', async () =>
      (await t.core.readNamespacedConfigMap({ name: 'greeting', namespace: `${name}-home` })).data?.greeting ===
      'whinny'
        ? true
        : undefined,
    );
    await until('generation 2 Ready', async () =>
      (await get(name)).status?.observedGeneration === 2 ? true : undefined,
    );
  }, 120_000);
});
