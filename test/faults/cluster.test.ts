/**
 * The whole cluster (issue 14, item 1), on a stack of this file's own started with `cluster: true`:
 * kube-controller-manager, kube-scheduler and kwok's simulated nodes beside envtest's control plane.
 * What envtest never does happens here: Deployments get Pods that become Ready, owned children are
 * garbage-collected, namespaces finish deleting, ServiceAccount tokens are issued, and a node whose
 * heartbeat stops goes NotReady and loses its Pods to the other nodes.
 */
import * as k8s from '@kubernetes/client-node';
import { type Stack, startStack } from '../../devstack';
import { kwokNodeNames } from '../../devstack/components/kwok';
import { eventually } from '../support/eventually';
import { randomSuffix } from '../support/harness';

jest.setTimeout(300_000);

const isNotFound = (err: unknown): boolean => (err as { code?: number }).code === 404;

function deployment(name: string, replicas: number): k8s.V1Deployment {
  return {
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'web', image: 'registry.invalid/web:1' }] },
      },
    },
  };
}

describe('devstack: the whole cluster (own stack, cluster: true)', () => {
  let stack: Stack;
  let kc: k8s.KubeConfig;
  let core: k8s.CoreV1Api;
  let apps: k8s.AppsV1Api;
  const namespaces: string[] = [];

  // The timeout covers a first run that builds the cluster's servers (minutes, then cached;
  // scripts/ensure-deps.sh builds them before the tests).
  beforeAll(async () => {
    const started = Date.now();
    stack = await startStack({ name: `cluster-${randomSuffix()}`, cluster: true, postgres: false });
    process.stderr.write(`[cluster test] stack with the whole cluster ready in ${Date.now() - started} ms\n`);
    kc = new k8s.KubeConfig();
    kc.loadFromFile(stack.endpoints.kubeconfig);
    core = kc.makeApiClient(k8s.CoreV1Api);
    apps = kc.makeApiClient(k8s.AppsV1Api);
  }, 40 * 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  async function namespace(): Promise<string> {
    const name = `c-${randomSuffix()}`;
    await core.createNamespace({ body: { metadata: { name } } });
    namespaces.push(name);
    return name;
  }

  const readyPods = async (ns: string, app: string): Promise<k8s.V1Pod[]> =>
    (await core.listNamespacedPod({ namespace: ns, labelSelector: `app=${app}` })).items.filter(
      (p) =>
        !p.metadata?.deletionTimestamp &&
        p.status?.phase === 'Running' &&
        p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    );

  it('given three simulated nodes, each is Ready and renews its Lease', async () => {
    const nodes = (await core.listNode()).items;
    expect(nodes.map((n) => n.metadata?.name).sort()).toEqual([...kwokNodeNames]);
    for (const node of nodes) {
      expect(node.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    }
    const coordination = kc.makeApiClient(k8s.CoordinationV1Api);
    const renewTime = async (): Promise<number> =>
      new Date(
        (await coordination.readNamespacedLease({ name: kwokNodeNames[0], namespace: 'kube-node-lease' })).spec!
          .renewTime as unknown as string,
      ).getTime();
    const first = await eventually('node lease', renewTime, (t) => t > 0);
    await eventually('lease renewed', renewTime, (t) => t > first, 20_000);
  });

  it('given a Deployment of 3 replicas, its Pods are scheduled onto the simulated nodes and become Running and Ready', async () => {
    const ns = await namespace();
    await apps.createNamespacedDeployment({ namespace: ns, body: deployment('web', 3) });
    const status = await eventually(
      'Deployment rolled out',
      async () => (await apps.readNamespacedDeployment({ name: 'web', namespace: ns })).status,
      (s) => s?.readyReplicas === 3 && s.availableReplicas === 3 && s.updatedReplicas === 3,
    );
    expect(status?.replicas).toBe(3);
    const pods = await readyPods(ns, 'web');
    expect(pods).toHaveLength(3);
    for (const pod of pods) expect(kwokNodeNames).toContain(pod.spec?.nodeName);
    // The ServiceAccount admission plugin runs: the Pod got the namespace's default ServiceAccount.
    expect(pods[0]?.spec?.serviceAccountName).toBe('default');

    // A deleted Pod is replaced by its ReplicaSet.
    await core.deleteNamespacedPod({ name: pods[0]!.metadata!.name!, namespace: ns });
    const after = await eventually(
      'ReplicaSet replaced the Pod',
      () => readyPods(ns, 'web'),
      (p) => p.length === 3 && !p.some((x) => x.metadata?.name === pods[0]!.metadata!.name),
    );
    expect(after).toHaveLength(3);
  });

  it('given a namespace ServiceAccount, a token is issued for it and authenticates as it', async () => {
    const ns = await namespace();
    await eventually(
      'default ServiceAccount',
      () => core.readNamespacedServiceAccount({ name: 'default', namespace: ns }),
      () => true,
    );
    const request = await core.createNamespacedServiceAccountToken({
      name: 'default',
      namespace: ns,
      body: { spec: { audiences: [], expirationSeconds: 600 } },
    });
    const token = request.status?.token;
    expect(token).toBeTruthy();
    const asSa = new k8s.KubeConfig();
    asSa.loadFromOptions({
      clusters: [{ name: 'c', server: stack.endpoints.kubeApiUrl, caFile: kc.getCurrentCluster()!.caFile }],
      users: [{ name: 'sa', token }],
      contexts: [{ name: 'c', cluster: 'c', user: 'sa' }],
      currentContext: 'c',
    });
    const review = await asSa.makeApiClient(k8s.AuthenticationV1Api).createSelfSubjectReview({ body: {} });
    expect(review.status?.userInfo?.username).toBe(`system:serviceaccount:${ns}:default`);
  });

  it('given owned children, deleting the owner garbage-collects them; deleting the namespace finishes', async () => {
    const ns = await namespace();
    const owner = await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'owner' } } });
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: {
        metadata: {
          name: 'child',
          ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata!.uid! }],
        },
      },
    });
    await apps.createNamespacedDeployment({ namespace: ns, body: deployment('gc', 2) });
    await eventually(
      'gc Pods',
      () => readyPods(ns, 'gc'),
      (p) => p.length === 2,
    );

    await core.deleteNamespacedConfigMap({ name: 'owner', namespace: ns });
    await apps.deleteNamespacedDeployment({ name: 'gc', namespace: ns }); // background propagation
    await eventually(
      'child ConfigMap collected',
      () => core.readNamespacedConfigMap({ name: 'child', namespace: ns }).then(() => false, isNotFound),
      (gone) => gone,
    );
    await eventually(
      'ReplicaSets and Pods collected',
      async () =>
        (await apps.listNamespacedReplicaSet({ namespace: ns })).items.length +
        (await core.listNamespacedPod({ namespace: ns })).items.length,
      (n) => n === 0,
    );

    await apps.createNamespacedDeployment({ namespace: ns, body: deployment('left', 2) });
    await eventually(
      'left Pods',
      () => readyPods(ns, 'left'),
      (p) => p.length === 2,
    );
    await core.deleteNamespace({ name: ns });
    await eventually(
      'namespace gone',
      () => core.readNamespace({ name: ns }).then(() => false, isNotFound),
      (gone) => gone,
      90_000,
    );
  });

  it('given a node whose heartbeat stops, it goes NotReady and its Pods move to the other nodes; resumed, it is Ready again', async () => {
    const ns = await namespace();
    await apps.createNamespacedDeployment({ namespace: ns, body: deployment('hb', 3) });
    const pods = await eventually(
      'hb Pods',
      () => readyPods(ns, 'hb'),
      (p) => p.length === 3,
    );
    const victim = pods[0]!.spec!.nodeName!;
    const nodeReady = async (): Promise<string | undefined> =>
      (await core.readNode({ name: victim })).status?.conditions?.find((c) => c.type === 'Ready')?.status;

    await stack.setNodeHeartbeat(victim, false);
    try {
      await eventually('node NotReady', nodeReady, (s) => s !== 'True', 60_000);
      const moved = await eventually(
        'Pods rescheduled off the node',
        () => readyPods(ns, 'hb'),
        (p) => p.length === 3 && p.every((x) => x.spec?.nodeName !== victim),
        90_000,
      );
      expect(new Set(moved.map((p) => p.spec?.nodeName)).has(victim)).toBe(false);
    } finally {
      await stack.setNodeHeartbeat(victim, true);
    }
    await eventually('node Ready again', nodeReady, (s) => s === 'True', 60_000);
  });

  it('given a node name that does not exist, setNodeHeartbeat fails and says so', async () => {
    await expect(stack.setNodeHeartbeat(`no-such-node-${'x'.repeat(200)}`, false)).rejects.toThrow(/HTTP 404/);
  });
});
