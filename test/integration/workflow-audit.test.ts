/**
 * No object without its workflow (issue 15): the bridge's audit starts the workflow of an object whose
 * workflow was terminated (or lost), within one resync period, and sends nothing to objects whose
 * workflow runs. Real worker, real bridge, built-in App, real Temporal and kube-apiserver.
 */
import * as k8s from '@kubernetes/client-node';
import pino from 'pino';
import { stateQuery, workflowIdFor, type ObjectRef } from '../../core/definitions';
import { randomSuffix, useStack } from '../support/harness';
import { historyCost } from '../support/counter-harness';
import { waitFor } from '../support/counter-harness';
import { installBuiltinCrds, type InProcessHomeostat, startInProcessHomeostat } from '../support/homeostat';

describe('the bridge audit: no object without its workflow', () => {
  const t = useStack();
  const taskQueue = `audit-${randomSuffix()}`;
  let homeostat: InProcessHomeostat;
  const group = 'homeostat.dev';

  beforeAll(async () => {
    installBuiltinCrds(t);
    homeostat = await startInProcessHomeostat(t, {
      taskQueue,
      logger: pino({ name: 'audit-test', level: 'warn' }),
      bridge: { resyncIntervalMs: 3000 },
    });
  }, 120_000);

  afterAll(async () => {
    await homeostat?.stop();
  });

  const apps = () => t.kc.makeApiClient(k8s.AppsV1Api);
  const appRef = (name: string): ObjectRef => ({
    group,
    version: 'v1alpha1',
    kind: 'App',
    namespace: t.namespace,
    name,
  });
  const createApp = (name: string) =>
    t.custom.createNamespacedCustomObject({
      group,
      version: 'v1alpha1',
      namespace: t.namespace,
      plural: 'apps',
      body: {
        apiVersion: `${group}/v1alpha1`,
        kind: 'App',
        metadata: { name },
        spec: { image: 'registry.spr.com/pony-spawner:v2.1.0', replicas: 2 },
      },
    });
  const phaseOf = async (name: string): Promise<string | undefined> =>
    (
      (await t.custom.getNamespacedCustomObject({
        group,
        version: 'v1alpha1',
        namespace: t.namespace,
        plural: 'apps',
        name,
      })) as { status?: { phase?: string } }
    ).status?.phase;

  it('given a Ready object whose workflow is terminated, a new workflow runs within one resync and corrects a hand-made drift; converged objects get no signal', async () => {
    const name = `lost-${randomSuffix()}`;
    const bystander = `calm-${randomSuffix()}`;
    await createApp(name);
    await createApp(bystander);
    await waitFor(
      async () => ((await phaseOf(name)) === 'Ready' && (await phaseOf(bystander)) === 'Ready') || undefined,
      60_000,
    );
    const handle = t.temporal.workflow.getHandle(workflowIdFor(appRef(name)));
    const first = await handle.describe();
    const calm = t.temporal.workflow.getHandle(workflowIdFor(appRef(bystander)));

    await handle.terminate('lost, as in a restore from an older backup');
    const terminatedAt = Date.now();
    const second = await waitFor(async () => {
      const d = await t.temporal.workflow.getHandle(workflowIdFor(appRef(name))).describe();
      return d.runId !== first.runId && d.status.name === 'RUNNING' ? d : undefined;
    }, 30_000);
    process.stdout.write(`audit: a terminated workflow was running again after ${Date.now() - terminatedAt} ms\n`);
    expect(second.runId).not.toBe(first.runId);
    await waitFor(async () => {
      const s = await t.temporal.workflow.getHandle(workflowIdFor(appRef(name))).query(stateQuery);
      return s.passes >= 1 && s.phase === 'Ready' && !s.reconciling ? s : undefined;
    }, 30_000);

    // From here on the bystander, converged long ago, must receive nothing through the audits to come.
    const calmBefore = historyCost(await calm.fetchHistory());

    // A hand-made drift: the Deployment scaled behind homeostat's back is put back.
    await apps().patchNamespacedDeployment(
      { name, namespace: t.namespace, body: { spec: { replicas: 7 } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    await waitFor(async () => {
      const d = await apps().readNamespacedDeployment({ name, namespace: t.namespace });
      return d.spec?.replicas === 2 || undefined;
    }, 30_000);
    // The scaled-back Deployment goes back to 2 replicas (the extra Pods terminate; on a stack without
    // a controller-manager it has no Pods at all), and the App, Reconciling meanwhile, is Ready again.
    // The Ready seen before the put-back's pass wrote its status would prove nothing: wait for the
    // Deployment to settle first.
    await waitFor(async () => {
      const d = await apps().readNamespacedDeployment({ name, namespace: t.namespace });
      const st = d.status ?? {};
      const current = (st.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0);
      const settled = (st.replicas ?? 0) <= 2 && (st.readyReplicas ?? 0) === (st.replicas ?? 0);
      return (current && settled) || undefined;
    }, 60_000);
    // Ready with no pass running or pending: a read after a bare "Ready" could meet the pass that the
    // last Pod's termination starts (Reconciling for a moment), which proves nothing either way.
    const settledPhase = await waitFor(async () => {
      const s = await t.temporal.workflow.getHandle(workflowIdFor(appRef(name))).query(stateQuery);
      const phase = await phaseOf(name);
      return phase === 'Ready' && !s.reconciling && !s.pending ? phase : undefined;
    }, 60_000);
    expect(settledPhase).toBe('Ready');

    // The bystander's workflow kept running through several more audits and received nothing.
    await new Promise((r) => setTimeout(r, 7000));
    const calmAfter = historyCost(await calm.fetchHistory());
    expect(calmAfter.byType.WORKFLOW_EXECUTION_SIGNALED ?? 0).toBe(calmBefore.byType.WORKFLOW_EXECUTION_SIGNALED ?? 0);
    expect((await calm.describe()).runId).toBeDefined();
  }, 180_000);
});
