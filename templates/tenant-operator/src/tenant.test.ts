/**
 * The Tenant operator on homeostat's real local stack (Temporal, etcd + kube-apiserver): its CRD
 * installed, its worker and informer bridge running in this process (`homeostat/testing`). The first
 * run builds the servers from Go modules (minutes, once; cached in ~/.cache/homeostat).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type {
  V1LimitRange,
  V1Namespace,
  V1NetworkPolicy,
  V1ResourceQuota,
  V1RoleBinding,
} from '@kubernetes/client-node';
import { startTestEnvironment, type TestEnvironment } from '../../../testing';
import operator from './operator';
import { childrenOf, type TenantSpec } from './tenant';

const apiVersion = 'platform.example.com/v1alpha1';
/** Plain data of a client model (deep equality compares prototypes too). */
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value ?? null));
const unique = (prefix: string): string => `${prefix}-${randomBytes(3).toString('hex')}`;

/** A Tenant object (unique name unless given). */
function tenantObject(name = unique('team'), spec: Partial<TenantSpec> = {}) {
  return { apiVersion, kind: 'Tenant', metadata: { name }, spec: { group: `${name}-devs`, ...spec } };
}

// node:test's describe and test return promises the runner itself awaits.
void describe('Tenant', () => {
  let env: TestEnvironment;

  before(
    async () => {
      env = await startTestEnvironment({ operator });
    },
    { timeout: 30 * 60_000 }, // a first run builds the servers
  );
  after(async () => {
    await env?.stop();
  });

  void test('given a Tenant, it becomes Ready with its Namespace, quota, limits, RoleBinding and NetworkPolicy', async () => {
    const tenant = await env.apply(tenantObject(undefined, { quota: { cpu: '2', memory: '4Gi', pods: 10 } }));
    const name = tenant.metadata.name;
    const ready = await env.waitForCondition(tenant, 'Ready', 'True');
    assert.equal(ready.status?.phase, 'Ready');

    const refs = childrenOf(name);
    for (const ref of Object.values(refs)) {
      const child = await env.get(ref);
      assert.ok(child, `${ref.kind} ${ref.metadata.name} exists`);
      assert.deepEqual(
        child.metadata?.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.controller]),
        [['Tenant', name, ready.metadata?.uid, true]],
        `${ref.kind} is controlled by the Tenant`,
      );
    }
    const namespace = await env.get<V1Namespace>(refs.namespace);
    assert.equal(namespace?.metadata?.labels?.['platform.example.com/tenant'], name);
    const quota = await env.get<V1ResourceQuota>(refs.quota);
    assert.deepEqual(plain(quota?.spec?.hard), {
      'requests.cpu': '2',
      'limits.cpu': '2',
      'requests.memory': '4Gi',
      'limits.memory': '4Gi',
      pods: '10',
    });
    const limits = await env.get<V1LimitRange>(refs.limits);
    assert.deepEqual(plain(limits?.spec?.limits[0]?._default), { cpu: '500m', memory: '512Mi' });
    const binding = await env.get<V1RoleBinding>(refs.access);
    assert.deepEqual(plain(binding?.roleRef), {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'edit',
    });
    assert.deepEqual(plain(binding?.subjects), [
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: `${name}-devs` },
    ]);
    const policy = await env.get<V1NetworkPolicy>(refs.network);
    assert.deepEqual(plain(policy?.spec?.policyTypes), ['Ingress']);
  });

  void test('given its RoleBinding deleted, homeostat puts it back', async () => {
    const tenant = await env.apply(tenantObject());
    await env.waitForCondition(tenant, 'Ready', 'True');
    const binding = childrenOf(tenant.metadata.name).access;
    const before = await env.get(binding);
    await env.delete(binding);
    const back = await env.waitFor(
      async () => {
        const current = await env.get(binding);
        return current && current.metadata?.uid !== before?.metadata?.uid ? current : undefined;
      },
      { timeoutMs: 30_000, what: 'the RoleBinding to be put back' },
    );
    assert.equal(back.metadata?.name, binding.metadata.name);
  });

  void test('given a reconcile through the HTTP API, it answers with the outcome of the pass', async () => {
    const tenant = await env.apply(tenantObject());
    await env.waitForCondition(tenant, 'Ready', 'True');
    const api = await env.startApi();
    const response = await api.fetch(
      `/v1/objects/platform.example.com/v1alpha1/Tenant/_/${tenant.metadata.name}/reconcile`,
      {
        method: 'POST',
      },
    );
    const body = (await response.json()) as { workflowId: string; outcome?: { result: string; phase: string } };
    assert.equal(response.status, 200, JSON.stringify(body));
    assert.equal(body.workflowId, `homeostat/platform.example.com/Tenant/_/${tenant.metadata.name}`);
    assert.deepEqual([body.outcome?.result, body.outcome?.phase], ['ready', 'Ready']);
  });

  void test('given Tenants, their workflows are found by kind in Temporal visibility (what the Temporal UI filters on)', async () => {
    const tenant = await env.apply(tenantObject());
    await env.waitForCondition(tenant, 'Ready', 'True');
    const found = await env.waitFor(
      async () => {
        const ids: string[] = [];
        const query = `HomeostatKind = 'Tenant' AND HomeostatName = '${tenant.metadata.name}'`;
        for await (const workflow of env.temporal.workflow.list({ query })) ids.push(workflow.workflowId);
        return ids.length > 0 ? ids : undefined;
      },
      { timeoutMs: 30_000, what: 'the workflow in visibility' },
    );
    assert.deepEqual(found, [`homeostat/platform.example.com/Tenant/_/${tenant.metadata.name}`]);
  });

  void test('given a spec granting a system: group, the API server refuses it at admission', async () => {
    await assert.rejects(env.apply(tenantObject(undefined, { group: 'system:authenticated' })), (err: unknown) => {
      assert.match(String((err as { body?: unknown }).body), /group must not be a system: group/);
      return true;
    });
  });

  void test('given a Tenant named after a Namespace it did not create, it refuses to adopt it, and deleting the Tenant leaves it alone', async () => {
    const name = unique('theirs');
    await env.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    const tenant = await env.apply(tenantObject(name));
    const refused = await env.waitFor(
      async () => {
        const current = await env.get(tenant);
        return JSON.stringify(current?.status ?? {}).includes('does not belong to this Tenant') ? current : undefined;
      },
      { what: 'the Tenant to report that it refuses the Namespace' },
    );
    assert.equal(refused.status?.phase, 'Degraded');

    await env.delete(tenant);
    await env.waitForDeletion(tenant);
    const namespace = await env.get({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    assert.ok(namespace && !namespace.metadata?.deletionTimestamp, 'the Namespace is still there');
    assert.equal(namespace.metadata?.ownerReferences, undefined);
  });

  void test('given a Tenant deleted, the garbage collector deletes its Namespace and everything in it', async () => {
    const tenant = await env.apply(tenantObject());
    await env.waitForCondition(tenant, 'Ready', 'True');
    await env.delete(tenant);
    await env.waitForDeletion(tenant); // no cleanup step, so no finalizer: it goes at once
    // Every child names the Tenant as its controller: Kubernetes' garbage collector deletes them, and
    // the namespace controller empties the Namespace and removes it.
    for (const child of Object.values(childrenOf(tenant.metadata.name))) {
      await env.waitFor(async () => ((await env.get(child)) === undefined ? true : undefined), {
        timeoutMs: 120_000,
        what: `${child.kind} ${child.metadata.name} to be garbage-collected`,
      });
    }
  });
});
