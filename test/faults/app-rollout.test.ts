/**
 * App means running (issue 14, item 2), on a stack of this file's own running the whole cluster: the
 * App's Deployment really gets Pods on kwok's simulated nodes, and the App follows its rollout through
 * the informer bridge alone — the Deployment is an owned kind with `statusChanges`, so each change of
 * its status signals the App's workflow; nothing here asks for a pass (no reconcile-now, no polling
 * loop, no requeue timer). An App is `Reconciling` with its replicas' progress ("1/3 replicas ready")
 * until every replica is updated, ready and available, then `Ready` with `status.readyReplicas`; a
 * rollout past its progress deadline ends `Degraded` with the Deployment's reason; a deleted Pod is
 * replaced by its ReplicaSet and a node that stops heartbeating loses its Pods to the other nodes,
 * while the App reports not-ready and then Ready again. Worker and bridge run in process.
 */
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { type ObjectState, stateQuery, workflowIdFor } from '../../core/definitions';
import pino from 'pino';
import { type Stack, startStack } from '../../devstack';
import { kwokNodeNames } from '../../devstack/components/kwok';
import { eventually } from '../support/eventually';
import { randomSuffix, type TestStack } from '../support/harness';
import { installBuiltinCrds, type InProcessHomeostat, startInProcessHomeostat } from '../support/homeostat';

jest.setTimeout(300_000);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const group = 'homeostat.dev';
const version = 'v1alpha1';

interface AppObj {
  metadata: { name: string; generation?: number };
  status?: {
    phase?: string;
    observedGeneration?: number;
    readyReplicas?: number;
    conditions?: { type: string; status: string; reason: string; message: string }[];
  };
}

describe('App rollouts on the whole cluster (own stack, cluster: true)', () => {
  let stack: Stack;
  let t: TestStack;
  let homeostat: InProcessHomeostat | undefined;
  let apps: k8s.AppsV1Api;

  // The timeout covers a first run that builds the cluster's servers (minutes, then cached;
  // scripts/ensure-deps.sh builds them before the tests).
  beforeAll(async () => {
    stack = await startStack({ name: `app-rollout-${randomSuffix()}`, cluster: true, postgres: false });
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(stack.endpoints.kubeconfig);
    const connection = await Connection.connect({ address: stack.endpoints.temporalAddress });
    const namespace = `t-${randomSuffix()}`;
    t = {
      stack,
      endpoints: stack.endpoints,
      kc,
      core: kc.makeApiClient(k8s.CoreV1Api),
      custom: kc.makeApiClient(k8s.CustomObjectsApi),
      apiext: kc.makeApiClient(k8s.ApiextensionsV1Api),
      connection,
      temporal: new Client({ connection, namespace: stack.endpoints.temporalNamespace }),
      namespace,
      unique: (prefix: string) => `${prefix}-${randomSuffix()}`,
      // The afterAll below stops homeostat before it closes the connection: nothing to defer.
      defer: () => {},
    };
    await t.core.createNamespace({ body: { metadata: { name: namespace } } });
    apps = kc.makeApiClient(k8s.AppsV1Api);
    installBuiltinCrds(t);
    homeostat = await startInProcessHomeostat(t, {
      taskQueue: `rollout-${randomSuffix()}`,
      logger: pino({ level: 'warn' }),
      bridge: { watchTimeoutSeconds: 30 },
    });
  }, 40 * 60_000);
  afterAll(async () => {
    await homeostat?.stop();
    await t?.connection.close();
    await stack?.stop();
  });

  const get = async (name: string): Promise<AppObj> =>
    (await t.custom.getNamespacedCustomObject({
      group,
      version,
      namespace: t.namespace,
      plural: 'apps',
      name,
    })) as AppObj;

  async function waitFor(name: string, ok: (o: AppObj) => boolean, timeoutMs = 90_000): Promise<AppObj> {
    const deadline = Date.now() + timeoutMs;
    let last: AppObj | undefined;
    while (Date.now() < deadline) {
      last = await get(name);
      if (ok(last)) return last;
      await sleep(250);
    }
    throw new Error(
      `App ${name}: not there after ${timeoutMs} ms; last status ${JSON.stringify(last?.status)}; ` +
        `the cluster: ${await clusterPicture(name)}`,
    );
  }

  /** What the cluster holds for an App (its Deployment, its Pods, the nodes): said when a wait fails. */
  const clusterPicture = async (name: string): Promise<string> => {
    const d = await apps.readNamespacedDeployment({ name, namespace: t.namespace }).catch(() => undefined);
    const pods = await t.core
      .listNamespacedPod({ namespace: t.namespace, labelSelector: `app.kubernetes.io/instance=${name}` })
      .catch(() => undefined);
    const nodes = await t.core.listNode().catch(() => undefined);
    return JSON.stringify({
      deployment: d && { generation: d.metadata?.generation, status: d.status },
      pods: pods?.items.map((p) => ({
        name: p.metadata?.name,
        node: p.spec?.nodeName,
        phase: p.status?.phase,
        deleting: Boolean(p.metadata?.deletionTimestamp),
        conditions: p.status?.conditions?.map((c) => `${c.type}=${c.status}${c.reason ? `(${c.reason})` : ''}`),
      })),
      nodes: nodes?.items.map((n) => ({
        name: n.metadata?.name,
        ready: n.status?.conditions?.find((c) => c.type === 'Ready')?.status,
        unschedulable: n.spec?.unschedulable,
        taints: n.spec?.taints?.map((x) => `${x.key}:${x.effect}`),
      })),
    });
  };

  /** Waits until a node is Ready and carries none of the taints the node lifecycle controller sets. */
  const waitNodeHealthy = (name: string): Promise<k8s.V1Node> =>
    eventually(
      `node ${name} Ready and untainted again`,
      () => t.core.readNode({ name }),
      (node) =>
        node.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' &&
        !(node.spec?.taints ?? []).some((x) => x.key.startsWith('node.kubernetes.io/')),
      90_000,
    );

  const setUnschedulable = async (unschedulable: boolean): Promise<void> => {
    for (const name of kwokNodeNames) {
      await t.core.patchNode(
        { name, body: { spec: { unschedulable } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
    }
  };

  const patchApp = async (name: string, spec: Record<string, unknown>): Promise<AppObj> =>
    (await t.custom.patchNamespacedCustomObject(
      { group, version, namespace: t.namespace, plural: 'apps', name, body: { spec } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    )) as AppObj;

  const createApp = async (name: string, spec: Record<string, unknown>): Promise<void> => {
    await t.custom.createNamespacedCustomObject({
      group,
      version,
      namespace: t.namespace,
      plural: 'apps',
      body: { apiVersion: `${group}/${version}`, kind: 'App', metadata: { name }, spec },
    });
  };

  /** The notes of the Events homeostat recorded for an App with `reason`, oldest first. */
  const eventNotes = async (name: string, reason: string): Promise<string[]> => {
    const list = await t.kc.makeApiClient(k8s.EventsV1Api).listNamespacedEvent({ namespace: t.namespace });
    return list.items
      .filter((e) => e.regarding?.kind === 'App' && e.regarding.name === name && e.reason === reason)
      .sort((a, b) => String(a.eventTime).localeCompare(String(b.eventTime)))
      .map((e) => e.note ?? '');
  };

  const appState = (name: string): Promise<ObjectState> =>
    t.temporal.workflow
      .getHandle(workflowIdFor({ group, kind: 'App', namespace: t.namespace, name }))
      .query(stateQuery);

  const readyPods = async (name: string): Promise<k8s.V1Pod[]> =>
    (
      await t.core.listNamespacedPod({ namespace: t.namespace, labelSelector: `app.kubernetes.io/instance=${name}` })
    ).items.filter(
      (p) =>
        !p.metadata?.deletionTimestamp &&
        p.status?.phase === 'Running' &&
        p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    );

  const readyIsComplete = (o: AppObj, generation?: number): boolean =>
    o.status?.phase === 'Ready' &&
    o.status.readyReplicas === 3 &&
    (generation === undefined || o.status.observedGeneration === generation);

  it('given a new App, it is Reconciling with its replicas’ progress until its Pods run, then Ready with readyReplicas; the bridge alone drives it', async () => {
    // No node takes Pods at first, so the rollout is held where it can be seen (on kwok's nodes Pods
    // run within a second, and a loaded machine may see only the end of it otherwise).
    await setUnschedulable(true);
    try {
      await createApp('run', { image: 'registry.spr.com/run:1', replicas: 3 });
      const held = await waitFor('run', (o) => o.status?.phase === 'Reconciling');
      expect(held.status?.readyReplicas).toBe(0);
      expect(held.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
        status: 'False',
        reason: 'Progressing',
      });
      expect(held.status?.conditions?.find((c) => c.type === 'DeploymentReady')).toMatchObject({
        status: 'False',
        message: expect.stringMatching(/^0\/3 replicas ready/),
      });
      // Reconciling is reported as an Event (one per phase change), with the progress in it.
      const deadline = Date.now() + 30_000;
      while ((await eventNotes('run', 'Progressing')).length === 0 && Date.now() < deadline) await sleep(250);
      expect((await eventNotes('run', 'Progressing'))[0]).toMatch(/^deployment: 0\/3 replicas ready/);
    } finally {
      await setUnschedulable(false);
    }
    const ready = await waitFor('run', (o) => readyIsComplete(o));
    expect(ready.status?.conditions?.find((c) => c.type === 'DeploymentReady')).toMatchObject({ status: 'True' });
    // When the App says Ready, the rollout is really complete.
    const d = await apps.readNamespacedDeployment({ name: 'run', namespace: t.namespace });
    expect(d.status).toMatchObject({ readyReplicas: 3, updatedReplicas: 3, availableReplicas: 3, replicas: 3 });
    expect((await readyPods('run')).length).toBe(3);
    // Nothing polls: the only timer armed is the drift check, and passes came from signals.
    const state = await appState('run');
    expect(state.nextTimer?.kind).toBe('drift');
    expect(state.passes).toBeGreaterThanOrEqual(2);
  });

  it('given a new image, the App goes Reconciling with replica progress and is Ready only when the new ReplicaSet is fully available', async () => {
    await waitFor('run', (o) => readyIsComplete(o));
    const before = (await eventNotes('run', 'Progressing')).length;
    const patched = await patchApp('run', { image: 'registry.spr.com/run:2' });
    const ready = await waitFor('run', (o) => readyIsComplete(o, patched.metadata.generation));
    expect(ready.status?.observedGeneration).toBe(patched.metadata.generation);
    const notes = await eventNotes('run', 'Progressing');
    expect(notes.length).toBeGreaterThan(before);
    expect(notes.slice(before).every((n) => /^deployment: \d\/3 replicas ready/.test(n))).toBe(true);
    const d = await apps.readNamespacedDeployment({ name: 'run', namespace: t.namespace });
    expect(d.spec?.template.spec?.containers[0]?.image).toBe('registry.spr.com/run:2');
    expect(d.status).toMatchObject({ updatedReplicas: 3, availableReplicas: 3, replicas: 3 });
    expect((d.status?.observedGeneration ?? 0) >= (d.metadata?.generation ?? 1)).toBe(true);
  });

  it('given one of its Pods deleted, the ReplicaSet replaces it and the App is Ready again with 3 ready replicas', async () => {
    await waitFor('run', (o) => readyIsComplete(o));
    const pods = await readyPods('run');
    const victim = pods[0]!.metadata!.name!;
    await t.core.deleteNamespacedPod({ name: victim, namespace: t.namespace, gracePeriodSeconds: 0 });
    for (let i = 0; ; i++) {
      const now = await readyPods('run');
      if (now.length === 3 && !now.some((p) => p.metadata?.name === victim)) break;
      if (i > 360) throw new Error(`Pod ${victim} not replaced: ${now.map((p) => p.metadata?.name).join(', ')}`);
      await sleep(250);
    }
    await waitFor('run', (o) => readyIsComplete(o));
  });

  it('given a node that stops renewing its Lease, its Pods move to the other nodes; the App reports not-ready, then Ready again', async () => {
    await waitFor('run', (o) => readyIsComplete(o));
    const victim = (await readyPods('run'))[0]!.spec!.nodeName!;
    const onVictim = (await readyPods('run')).filter((p) => p.spec?.nodeName === victim).length;
    const seen: string[] = [];
    await stack.setNodeHeartbeat(victim, false);
    try {
      // The App follows: fewer than 3 replicas ready while the node's Pods are not ready or moving.
      const notReady = await waitFor(
        'run',
        (o) => {
          seen.push(`${o.status?.phase}:${o.status?.readyReplicas}`);
          return o.status?.phase === 'Reconciling' && (o.status.readyReplicas ?? 3) < 3;
        },
        120_000,
      );
      expect(notReady.status?.readyReplicas).toBeLessThanOrEqual(3 - onVictim);
      expect(notReady.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
        status: 'False',
        reason: 'Progressing',
      });
      const back = await waitFor('run', (o) => readyIsComplete(o), 150_000);
      expect(back.status?.readyReplicas).toBe(3);
      const moved = await readyPods('run');
      expect(moved.some((p) => p.spec?.nodeName === victim)).toBe(false);
    } finally {
      await stack.setNodeHeartbeat(victim, true);
    }
    // The tests after this one start on a whole cluster again: the node back, Ready and untainted.
    await waitNodeHealthy(victim);
  });

  it('given a rollout that cannot progress, the Deployment’s status change after its deadline makes the App Degraded with ProgressDeadlineExceeded; a fixed spec makes it Ready', async () => {
    await t.custom.createNamespacedCustomObject({
      group,
      version,
      namespace: t.namespace,
      plural: 'apps',
      body: {
        apiVersion: `${group}/${version}`,
        kind: 'App',
        metadata: { name: 'web' },
        spec: { image: 'registry.spr.com/web:1', replicas: 2, progressDeadlineSeconds: 10 },
      },
    });
    await waitFor('web', (o) => o.status?.phase === 'Ready');
    // The Deployment really rolls out on the simulated nodes.
    for (let i = 0; ; i++) {
      const d = await apps.readNamespacedDeployment({ name: 'web', namespace: t.namespace });
      if (d.status?.readyReplicas === 2) break;
      if (i > 240) throw new Error(`Deployment not rolled out: ${JSON.stringify(d.status)}`);
      await sleep(250);
    }

    await setUnschedulable(true);
    try {
      const patched = (await t.custom.patchNamespacedCustomObject(
        {
          group,
          version,
          namespace: t.namespace,
          plural: 'apps',
          name: 'web',
          body: { spec: { image: 'registry.spr.com/web:2' } },
        },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      )) as AppObj;
      // The rollout's deadline passes: the Deployment says so in its Progressing condition.
      for (let i = 0; ; i++) {
        const d = await apps.readNamespacedDeployment({ name: 'web', namespace: t.namespace });
        const progressing = d.status?.conditions?.find((c) => c.type === 'Progressing');
        if (progressing?.reason === 'ProgressDeadlineExceeded') break;
        if (i > 240) throw new Error(`no ProgressDeadlineExceeded: ${JSON.stringify(d.status)}`);
        await sleep(250);
      }
      // No pass is asked for: the Deployment's status change reaches the App through the bridge.
      const degraded = await waitFor(
        'web',
        (o) => o.status?.phase === 'Degraded' && o.status.observedGeneration === patched.metadata.generation,
        30_000,
      );
      const condition = degraded.status?.conditions?.find((c) => c.type === 'Degraded');
      expect(condition?.status).toBe('True');
      expect(condition?.message).toMatch(/ProgressDeadlineExceeded/);
    } finally {
      await setUnschedulable(false);
    }

    const fixed = (await t.custom.patchNamespacedCustomObject(
      {
        group,
        version,
        namespace: t.namespace,
        plural: 'apps',
        name: 'web',
        body: { spec: { image: 'registry.spr.com/web:3' } },
      },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    )) as AppObj;
    await waitFor(
      'web',
      (o) => o.status?.phase === 'Ready' && o.status.observedGeneration === fixed.metadata.generation,
    );
  });

  it('given a progress deadline below 10 s or above a day, the API server refuses it', async () => {
    for (const progressDeadlineSeconds of [0, 9, 86_401, 1e12]) {
      await expect(
        t.custom.createNamespacedCustomObject({
          group,
          version,
          namespace: t.namespace,
          plural: 'apps',
          body: {
            apiVersion: `${group}/${version}`,
            kind: 'App',
            metadata: { name: `bad-${randomSuffix(2)}` },
            spec: { image: 'registry.spr.com/web:1', progressDeadlineSeconds },
          },
        }),
      ).rejects.toMatchObject({ code: 422 });
    }
  });
});
