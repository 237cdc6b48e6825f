/**
 * Tenant isolation, reads (issue 31): a namespaced object's steps read objects in its own namespace
 * only, unless its reconciler declares a read elsewhere (`reads`). The `SecretMirror` fixture copies
 * the Secret its spec names into a Secret of its own — a hostile tenant's way to read another team's
 * Secret through homeostat. The worker runs as a ServiceAccount of homeostat's namespace, whose every
 * request the API server's audit log records, so "reads nothing" is shown from the API server's side.
 */
import { readFileSync } from 'node:fs';
import * as k8s from '@kubernetes/client-node';
import pino from 'pino';
import { secretMirrors } from '../fixtures/operators/secret-mirrors';
import { randomSuffix, useStack } from '../support/harness';
import { installOperatorCrds, type InProcessHomeostat, startInProcessHomeostat } from '../support/homeostat';
import { sleep, waitFor } from '../support/bridge';

interface AuditEvent {
  user: { username: string };
  verb: string;
  objectRef?: { resource?: string; namespace?: string; name?: string };
}
interface Mirror {
  status?: { phase?: string; conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}

const systemNamespace = 'homeostat-system';

describe('tenant isolation: reads', () => {
  const t = useStack();
  const suffix = randomSuffix();
  const victim = `t-victim-${suffix}`;
  const shared = `t-shared-${suffix}`;
  const account = `reads-${suffix}`;
  const username = `system:serviceaccount:${systemNamespace}:${account}`;
  const group = 'mirrors.example.com';
  const operator = secretMirrors(shared);
  let homeostat: InProcessHomeostat | undefined;
  let rbac: k8s.RbacAuthorizationV1Api;

  /** A kubeconfig that is the ServiceAccount `account` of homeostat's namespace, bound to cluster-admin. */
  async function workerKubeconfig(): Promise<k8s.KubeConfig> {
    await t.core.createNamespace({ body: { metadata: { name: systemNamespace } } }).catch(() => {});
    await t.core.createNamespacedServiceAccount({ namespace: systemNamespace, body: { metadata: { name: account } } });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: account },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
        subjects: [{ kind: 'ServiceAccount', name: account, namespace: systemNamespace }],
      },
    });
    const { status } = await t.core.createNamespacedServiceAccountToken({
      namespace: systemNamespace,
      name: account,
      body: { spec: { audiences: [], expirationSeconds: 3600 } },
    });
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ ...t.kc.getCurrentCluster()!, name: 'stack' }],
      users: [{ name: account, token: status!.token }],
      contexts: [{ name: account, cluster: 'stack', user: account }],
      currentContext: account,
    });
    return kc;
  }

  beforeAll(async () => {
    rbac = t.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    for (const name of [victim, shared]) {
      await t.core.createNamespace({ body: { metadata: { name, labels: { 'homeostat.dev/test': 'true' } } } });
    }
    await installOperatorCrds(t, operator);
    homeostat = await startInProcessHomeostat(t, {
      taskQueue: `reads-${suffix}`,
      logger: pino({ level: 'warn' }),
      operator,
      kc: { worker: await workerKubeconfig() },
      bridge: {},
    });
  }, 120_000);

  afterAll(async () => {
    await homeostat?.stop();
    await rbac?.deleteClusterRoleBinding({ name: account }).catch(() => {});
    for (const name of [victim, shared]) await t.core?.deleteNamespace({ name }).catch(() => {});
  });

  const secret = (namespace: string, name: string) =>
    t.core.createNamespacedSecret({ namespace, body: { metadata: { name }, stringData: { password: `pw-${name}` } } });
  async function mirror(name: string, secretRef: { name: string; namespace?: string }): Promise<void> {
    await t.custom.createNamespacedCustomObject({
      group,
      version: 'v1',
      namespace: t.namespace,
      plural: 'secretmirrors',
      body: { apiVersion: `${group}/v1`, kind: 'SecretMirror', metadata: { name }, spec: { secretRef } },
    });
  }
  const mirrorOf = async (name: string): Promise<Mirror> =>
    (await t.custom.getNamespacedCustomObject({
      group,
      version: 'v1',
      namespace: t.namespace,
      plural: 'secretmirrors',
      name,
    })) as Mirror;
  const ready = (m: Mirror) => m.status?.conditions?.find((c) => c.type === 'Ready');
  const copyOf = (name: string) =>
    t.core.readNamespacedSecret({ namespace: t.namespace, name: `${name}-copy` }).catch(() => undefined);
  /** The worker's requests for Secret `namespace/name`, from the API server's audit log. */
  const auditedReads = (namespace: string, name: string): AuditEvent[] =>
    readFileSync(t.stack.auditLog, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as AuditEvent)
      .filter(
        (e) =>
          e.user.username === username &&
          e.objectRef?.resource === 'secrets' &&
          e.objectRef.namespace === namespace &&
          e.objectRef.name === name,
      );

  it("given a mirror naming another namespace's Secret, the step fails terminally, no copy is made and the API server saw no request for that Secret", async () => {
    const target = `db-admin-${randomSuffix()}`;
    await secret(victim, target);
    // The control: a Secret of the tenant's own namespace is read (and the audit log sees that read).
    const own = `own-${randomSuffix()}`;
    await secret(t.namespace, own);
    await mirror('own', { name: own });
    await waitFor(async () => (await mirrorOf('own')).status?.phase === 'Ready', 60_000, 250, 'own mirror Ready');

    await mirror('steal', { name: target, namespace: victim });
    await waitFor(async () => (await mirrorOf('steal')).status?.phase === 'Degraded', 60_000, 250, 'steal Degraded');
    const refused = ready(await mirrorOf('steal'));
    expect(refused).toMatchObject({ status: 'False', reason: 'TerminalStepError' });
    expect(refused?.message).toContain(`read Secret ${victim}/${target} refused for SecretMirror ${t.namespace}/steal`);
    expect(refused?.message).toContain('steps read only in its own namespace');
    expect(await copyOf('steal')).toBeUndefined();

    await sleep(2_000); // the audit log is written in batches
    expect(auditedReads(t.namespace, own).map((e) => e.verb)).toContain('get');
    expect(auditedReads(victim, target)).toEqual([]);
  }, 120_000);

  it('given a mirror naming a Secret of the namespace its reconciler declares, the read is allowed', async () => {
    const name = `shared-${randomSuffix()}`;
    await secret(shared, name);
    await mirror('declared', { name, namespace: shared });
    await waitFor(async () => (await mirrorOf('declared')).status?.phase === 'Ready', 60_000, 250, 'declared Ready');
    const copy = await copyOf('declared');
    expect(Buffer.from(copy?.data?.password ?? '', 'base64').toString()).toBe(`pw-${name}`);
  }, 120_000);
});
