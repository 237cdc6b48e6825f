/**
 * App rollouts on the whole cluster (issue 14, item 2), on a stack of this file's own with
 * `cluster: true`: the App's Deployment really gets Pods on kwok's simulated nodes, and a rollout that
 * cannot progress (every node cordoned, so the new Pods stay Pending) ends `Degraded` with the
 * Deployment's own reason at the first pass after its progress deadline passed; fixing the spec brings
 * it back to Ready. Worker and bridge run in process.
 *
 * That pass is requested here with reconcile-now: the bridge ignores status-only changes of owned
 * children by design (they are watched as metadata only), so a Deployment's status does not yet
 * trigger a pass by itself; the drift check (5 minutes) would otherwise be the next one.
 */
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { reconcileNowUpdate, workflowIdFor } from '../../core/definitions';
import pino from 'pino';
import { type Stack, startStack } from '../../devstack';
import { kwokNodeNames } from '../../devstack/components';
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
    throw new Error(`App ${name}: not there after ${timeoutMs} ms; last status ${JSON.stringify(last?.status)}`);
  }

  const setUnschedulable = async (unschedulable: boolean): Promise<void> => {
    for (const name of kwokNodeNames) {
      await t.core.patchNode(
        { name, body: { spec: { unschedulable } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
    }
  };

  it('given a rollout that cannot progress, the next pass after its deadline makes the App Degraded with ProgressDeadlineExceeded; a fixed spec makes it Ready', async () => {
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
      const ref = { group, version, kind: 'App', namespace: t.namespace, name: 'web' };
      await t.temporal.workflow.getHandle(workflowIdFor(ref)).executeUpdate(reconcileNowUpdate, { args: [{ ref }] });
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
