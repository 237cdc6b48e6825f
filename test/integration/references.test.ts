/**
 * Referenced (not owned) objects on the real stack: a change to an object that objects read — the
 * built-in PostgresDatabase's PostgresServer, and a team operator's Secret watched as metadata only —
 * re-reconciles exactly the objects that refer to it, within seconds, and the steps see the new value.
 */
import type { V1ConfigMap, V1Secret } from '@kubernetes/client-node';
import * as k8s from '@kubernetes/client-node';
import pino from 'pino';
import { z } from 'zod';
import { defaultPayloadConverter } from '@temporalio/common';
import { stateQuery, workflowIdFor, type ObjectState, type ReconcileRequest } from '../../core/definitions';
import { defineOperator, definePlan, defineReconciler } from '../../reconcilers';
import { randomSuffix, useStack } from '../support/harness';
import {
  installBuiltinCrds,
  installOperatorCrds,
  type InProcessHomeostat,
  startInProcessHomeostat,
} from '../support/homeostat';
import { createPostgresServer, systemNamespace } from '../support/postgres';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
const unb64 = (s: string | undefined): string | undefined =>
  s === undefined ? undefined : Buffer.from(s, 'base64').toString('utf8');

/** Polls `fn` every 50 ms until it returns a value; throws after `timeoutMs` with `what`. */
async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  for (const deadline = Date.now() + timeoutMs; ; await sleep(50)) {
    const value = await fn().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
  }
}

/** Signals the bridge sent with `reason`. */
async function signalsWith(homeostat: InProcessHomeostat, reason: string): Promise<number> {
  const metric = await homeostat.bridge!.metrics.signalsSent.get();
  return metric.values.filter((v) => v.labels.reason === reason).reduce((n, v) => n + v.value, 0);
}

describe('referenced objects: the built-in PostgresDatabase and its PostgresServer', () => {
  let homeostat: InProcessHomeostat | undefined;
  // Declared before useStack's own afterAll, so the bridge flushes while the Temporal connection is open.
  afterAll(async () => {
    await homeostat?.stop();
  });
  const t = useStack();

  beforeAll(async () => {
    installBuiltinCrds(t);
    homeostat = await startInProcessHomeostat(t, {
      taskQueue: `refs-builtin-${randomSuffix()}`,
      logger: pino({ level: 'warn' }),
      bridge: {},
    });
  }, 120_000);

  it('given a PostgresDatabase, a change to its PostgresServer re-reconciles it within seconds and its connection Secret carries the new host', async () => {
    const name = `ranch-${randomSuffix()}`;
    const database = `refs_${randomSuffix()}`;
    const server = await createPostgresServer(t, `refs-${randomSuffix()}`);
    await t.custom.createNamespacedCustomObject({
      group: 'homeostat.dev',
      version: 'v1alpha1',
      namespace: t.namespace,
      plural: 'postgresdatabases',
      body: {
        apiVersion: 'homeostat.dev/v1alpha1',
        kind: 'PostgresDatabase',
        metadata: { name },
        spec: { serverRef: { name: server }, databaseName: database, ownerRole: database },
      },
    });
    const connectionHost = async (): Promise<string | undefined> =>
      unb64((await t.core.readNamespacedSecret({ name: `${name}-connection`, namespace: t.namespace })).data?.host);
    expect(await until('the connection Secret', connectionHost, 90_000)).toBe('127.0.0.1');
    const handle = t.temporal.workflow.getHandle(
      workflowIdFor({ group: 'homeostat.dev', kind: 'PostgresDatabase', namespace: t.namespace, name }),
    );
    const settled = await until('the first pass to finish Ready', async () => {
      const s = await handle.query(stateQuery);
      return !s.reconciling && !s.pending && s.lastOutcome?.result === 'ready' ? s : undefined;
    });
    const signalsBefore = await signalsWith(homeostat!, 'referenced-changed');

    // The server's admin Secret changes to another name of the same server: a value only the server
    // (through its Secret, in homeostat's namespace) carries.
    const moved = `${server}-moved`;
    await t.core.createNamespacedSecret({
      namespace: systemNamespace,
      body: {
        metadata: { name: moved },
        data: { url: b64(t.endpoints.postgresUrl.replace('@127.0.0.1:', '@localhost:')) },
      },
    });
    const changedAt = Date.now();
    await t.custom.patchClusterCustomObject(
      {
        group: 'homeostat.dev',
        version: 'v1alpha1',
        plural: 'postgresservers',
        name: server,
        body: { spec: { adminSecretRef: { name: moved } } },
      },
      mergePatch,
    );
    const next = await until(
      'a new pass',
      async () => {
        const s: ObjectState = await handle.query(stateQuery);
        return s.passes > settled.passes || s.reconciling ? s : undefined;
      },
      30_000,
    );
    const passStartedMs = Date.now() - changedAt;
    await until('the connection Secret to name the new host', async () =>
      (await connectionHost()) === 'localhost' ? true : undefined,
    );
    const newValueMs = Date.now() - changedAt;
    process.stderr.write(
      `[figures] referenced Secret change → new PostgresDatabase pass seen after ${passStartedMs} ms; ` +
        `connection Secret rewritten with the new host after ${newValueMs} ms\n`,
    );
    expect(next.uid ?? settled.uid).toBe(settled.uid);
    expect((await handle.query(stateQuery)).passes).toBeGreaterThan(settled.passes);
    // Well inside the drift check (1 minute): the reference, not a timer, ran the pass.
    expect(newValueMs).toBeLessThan(20_000);
    expect(await signalsWith(homeostat!, 'referenced-changed')).toBeGreaterThan(signalsBefore);
    // Secrets are watched as metadata only, so the bridge holds no Secret data.
    const cachedSecrets = [...(homeostat!.bridge!.cacheOf('', 'Secret')?.values() ?? [])];
    expect(cachedSecrets.map((s) => s.metadata.name)).toEqual(expect.arrayContaining([`${name}-connection`]));
    expect(cachedSecrets.filter((s) => 'data' in s || 'stringData' in s)).toEqual([]);
  }, 180_000);

  it('given a terminal failure caused by its server (admin Secret not a URL), fixing the server alone heals it: no spec change', async () => {
    const name = `broken-${randomSuffix()}`;
    const database = `refs_${randomSuffix()}`;
    const server = await createPostgresServer(t, `broken-${randomSuffix()}`, { url: 'not a url at all' });
    await t.custom.createNamespacedCustomObject({
      group: 'homeostat.dev',
      version: 'v1alpha1',
      namespace: t.namespace,
      plural: 'postgresdatabases',
      body: {
        apiVersion: 'homeostat.dev/v1alpha1',
        kind: 'PostgresDatabase',
        metadata: { name },
        spec: { serverRef: { name: server }, databaseName: database, ownerRole: database },
      },
    });
    const handle = t.temporal.workflow.getHandle(
      workflowIdFor({ group: 'homeostat.dev', kind: 'PostgresDatabase', namespace: t.namespace, name }),
    );
    const failed = await until('a terminal failure', async () => {
      const s = await handle.query(stateQuery);
      return !s.reconciling && s.lastOutcome?.result === 'degraded' && /is not a URL/.test(s.lastError ?? '')
        ? s
        : undefined;
    });
    expect(failed.observedGeneration).toBe(1);
    const fixed = `${server}-fixed`;
    await t.core.createNamespacedSecret({
      namespace: systemNamespace,
      body: { metadata: { name: fixed }, stringData: { url: t.endpoints.postgresUrl } },
    });
    await t.custom.patchClusterCustomObject(
      {
        group: 'homeostat.dev',
        version: 'v1alpha1',
        plural: 'postgresservers',
        name: server,
        body: { spec: { adminSecretRef: { name: fixed } } },
      },
      mergePatch,
    );
    const healed = await until(
      'Ready after the Secret was fixed',
      async () => {
        const s = await handle.query(stateQuery);
        return s.lastOutcome?.result === 'ready' ? s : undefined;
      },
      60_000,
    );
    expect(healed.observedGeneration).toBe(1);
  }, 150_000);
});

// A team's operator: each Reader copies the Secret it names (spec.secretName) into a ConfigMap it owns.
const readerPlan = definePlan({
  group: 'readers.example.com',
  version: 'v1',
  kind: 'Reader',
  plural: 'readers',
  scope: 'Namespaced',
  owns: [{ apiVersion: 'v1', kind: 'ConfigMap' }],
  steps: [{ name: 'copy', retry: { initialInterval: '200 milliseconds', maximumInterval: '1 second' } }],
});

const reader = defineReconciler({
  plan: readerPlan,
  schema: z.object({ secretName: z.string().min(1).max(253) }),
  references: [
    {
      apiVersion: 'v1',
      kind: 'Secret',
      referencedBy: (o) => {
        const name = (o.spec as { secretName?: unknown } | undefined)?.secretName;
        return typeof name === 'string' ? [{ name }] : [];
      },
    },
  ],
  steps: {
    copy: async (ctx) => {
      const secret = await ctx.read<V1Secret>({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: ctx.spec.secretName },
      });
      const value = unb64(secret?.data?.value) ?? '<missing>';
      await ctx.children.apply<V1ConfigMap>({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `${ctx.object.name}-copy` },
        data: { value },
      });
      return { message: `copied ${value.length} characters` };
    },
  },
});

const readers = defineOperator({ name: 'readers', reconcilers: [reader] });

describe('referenced objects: a team operator whose objects read Secrets they do not own', () => {
  let homeostat: InProcessHomeostat | undefined;
  // Declared before useStack's own afterAll, so the bridge flushes while the Temporal connection is open.
  afterAll(async () => {
    await homeostat?.stop();
  });
  const t = useStack();

  beforeAll(async () => {
    await installOperatorCrds(t, readers);
    homeostat = await startInProcessHomeostat(t, {
      taskQueue: `refs-readers-${randomSuffix()}`,
      logger: pino({ level: 'warn' }),
      operator: readers,
      bridge: {},
    });
  }, 120_000);

  const createSecret = (name: string, value: string) =>
    t.core.createNamespacedSecret({ namespace: t.namespace, body: { metadata: { name }, stringData: { value } } });
  const createReader = (name: string, secretName: string) =>
    t.custom.createNamespacedCustomObject({
      group: readerPlan.group,
      version: 'v1',
      namespace: t.namespace,
      plural: 'readers',
      body: { apiVersion: `${readerPlan.group}/v1`, kind: 'Reader', metadata: { name }, spec: { secretName } },
    });
  const copyOf = async (name: string): Promise<string | undefined> =>
    (await t.core.readNamespacedConfigMap({ name: `${name}-copy`, namespace: t.namespace })).data?.value;
  /** The reasons of every reconcile request a Reader's workflow received, from its history. */
  const reasonsOf = async (name: string): Promise<string[]> => {
    const handle = t.temporal.workflow.getHandle(
      workflowIdFor({ group: readerPlan.group, kind: 'Reader', namespace: t.namespace, name }),
    );
    const history = await handle.fetchHistory();
    return (history.events ?? [])
      .map((e) => e.workflowExecutionSignaledEventAttributes?.input?.payloads?.[0])
      .filter((p): p is NonNullable<typeof p> => p != null)
      .map((p) => defaultPayloadConverter.fromPayload<ReconcileRequest>(p).reason);
  };

  it('given two Readers of one Secret and one of another, changing and deleting the first Secret re-reconciles exactly its two readers', async () => {
    const [shared, other] = [`shared-${randomSuffix()}`, `other-${randomSuffix()}`];
    const [r1, r2, r3] = ['r1', 'r2', 'r3'].map((r) => `${r}-${randomSuffix()}`) as [string, string, string];
    await createSecret(shared, 'v1');
    await createSecret(other, 'x');
    await createReader(r1, shared);
    await createReader(r2, shared);
    await createReader(r3, other);
    for (const [r, v] of [
      [r1, 'v1'],
      [r2, 'v1'],
      [r3, 'x'],
    ] as const) {
      await until(`${r} to copy ${v}`, async () => ((await copyOf(r)) === v ? true : undefined));
    }

    const changedAt = Date.now();
    await t.core.patchNamespacedSecret(
      { name: shared, namespace: t.namespace, body: { data: { value: b64('v2') } } },
      mergePatch,
    );
    await until('r1 and r2 to copy v2', async () =>
      (await copyOf(r1)) === 'v2' && (await copyOf(r2)) === 'v2' ? true : undefined,
    );
    const changeMs = Date.now() - changedAt;

    const deletedAt = Date.now();
    await t.core.deleteNamespacedSecret({ name: shared, namespace: t.namespace });
    await until('r1 and r2 to see the Secret gone', async () =>
      (await copyOf(r1)) === '<missing>' && (await copyOf(r2)) === '<missing>' ? true : undefined,
    );
    const deleteMs = Date.now() - deletedAt;
    process.stderr.write(
      `[figures] referenced Secret (metadata-only watch) changed → both readers copied the new value after ${changeMs} ms; ` +
        `deleted → both saw it gone after ${deleteMs} ms\n`,
    );
    expect(changeMs).toBeLessThan(10_000);
    expect(deleteMs).toBeLessThan(10_000);
    // The readers of the other Secret were not asked (their signals arrive with the same event's).
    await sleep(1_000);
    expect(await reasonsOf(r1)).toContain('referenced-changed');
    expect(await reasonsOf(r2)).toContain('referenced-changed');
    expect(await reasonsOf(r3)).not.toContain('referenced-changed');
    expect(await copyOf(r3)).toBe('x');

    // Creating the Secret again (a reader waiting for a missing Secret) re-reconciles as well.
    await createSecret(shared, 'v3');
    await until('r1 to copy v3', async () => ((await copyOf(r1)) === 'v3' ? true : undefined), 10_000);
  }, 180_000);

  it('given Secrets with data, the bridge caches their metadata only (no data, no managedFields)', async () => {
    const name = `big-${randomSuffix()}`;
    await createSecret(name, 'x'.repeat(200_000));
    const cached = await until('the Secret in the bridge cache', async () =>
      homeostat!.bridge!.cacheOf('', 'Secret')?.get(`${t.namespace}/${name}`),
    );
    expect(cached).not.toHaveProperty('data');
    expect(cached.metadata).not.toHaveProperty('managedFields');
    expect(cached.metadata.resourceVersion).toBeTruthy();
    expect(JSON.stringify(cached).length).toBeLessThan(1_000);
  }, 60_000);
});
