/**
 * Tenant isolation, the Kubernetes half (issue 13): a tenant who may create objects in its namespace
 * cannot make homeostat take over, change or delete an object homeostat did not create for that object
 * (refused with `Ready=False`, reason `AdoptionRefused`, the object unchanged), and conditions other
 * controllers write on an object survive homeostat's status writes. The `Claim` operator
 * (test/fixtures/operators/claims.ts) names the child a hostile tenant chooses; the built-in `App` named
 * like an existing Service is the issue's own example.
 */
import * as k8s from '@kubernetes/client-node';
import pino from 'pino';
import { createActivities } from '../../activities';
import type { Observation } from '../../core/activity-contract';
import claims from '../fixtures/operators/claims';
import { randomSuffix, useStack } from '../support/harness';
import {
  installBuiltinCrds,
  installOperatorCrds,
  type InProcessHomeostat,
  startInProcessHomeostat,
} from '../support/homeostat';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}
interface Claimed {
  metadata: { name: string; uid: string; generation: number; resourceVersion: string };
  status?: { phase?: string; observedGeneration?: number; conditions?: Condition[] };
}

/** What a test compares to tell whether an object was touched: resourceVersion and content. */
function fingerprint(obj: k8s.KubernetesObject | undefined, withResourceVersion = true): string {
  const o = obj as (k8s.KubernetesObject & Record<string, unknown>) | undefined;
  if (!o) return 'absent';
  const { managedFields: _m, resourceVersion, ...metadata } = o.metadata ?? {};
  const { status: _s, ...rest } = o;
  return JSON.stringify({ ...rest, metadata: withResourceVersion ? { ...metadata, resourceVersion } : metadata });
}

describe('tenant isolation: children and status', () => {
  const t = useStack();
  let homeostat: InProcessHomeostat | undefined;
  let objects: k8s.KubernetesObjectApi;
  let other: string;
  const group = 'claims.example.com';

  beforeAll(async () => {
    objects = k8s.KubernetesObjectApi.makeApiClient(t.kc);
    other = `t-other-${randomSuffix()}`;
    await t.core.createNamespace({ body: { metadata: { name: other, labels: { 'homeostat.dev/test': 'true' } } } });
    await installOperatorCrds(t, claims);
    homeostat = await startInProcessHomeostat(t, {
      taskQueue: `claims-${randomSuffix()}`,
      logger: pino({ level: 'warn' }),
      operator: claims,
      bridge: {},
    });
  }, 120_000);

  afterAll(async () => {
    await homeostat?.stop();
    await t.core?.deleteNamespace({ name: other }).catch(() => {});
  });

  const claimCoords = (name: string) => ({ group, version: 'v1', namespace: t.namespace, plural: 'claims', name });
  const getClaim = async (name: string): Promise<Claimed> =>
    (await t.custom.getNamespacedCustomObject(claimCoords(name))) as Claimed;
  async function createClaim(name: string, spec: Record<string, unknown>): Promise<void> {
    await t.custom.createNamespacedCustomObject({
      ...claimCoords(name),
      body: { apiVersion: `${group}/v1`, kind: 'Claim', metadata: { name }, spec },
    });
  }
  const ready = (c: Claimed): Condition | undefined => c.status?.conditions?.find((x) => x.type === 'Ready');
  async function waitFor(name: string, what: string, test: (c: Claimed) => boolean, ms = 60_000): Promise<Claimed> {
    let last: Claimed | undefined;
    for (const deadline = Date.now() + ms; Date.now() < deadline; await sleep(250)) {
      last = await getClaim(name);
      if (test(last)) return last;
    }
    throw new Error(`claim ${name}: not ${what}: ${JSON.stringify(last?.status)}`);
  }
  const read = async (kind: string, apiVersion: string, namespace: string, name: string) =>
    objects.read({ apiVersion, kind, metadata: { name, namespace } }).catch(() => undefined);

  /** An object a tenant did not get from homeostat, wearing homeostat's labels (labels are forgeable). */
  function unowned(kind: string, namespace: string, name: string, extra: object = {}): k8s.KubernetesObject {
    const metadata = {
      name,
      namespace,
      labels: { 'app.kubernetes.io/managed-by': 'homeostat', 'homeostat.dev/owner-uid': 'forged' },
      ...extra,
    };
    switch (kind) {
      case 'ConfigMap':
        return { apiVersion: 'v1', kind, metadata, data: { admin: 'keep me' } } as k8s.KubernetesObject;
      case 'Secret':
        return {
          apiVersion: 'v1',
          kind,
          metadata,
          stringData: { url: 'postgres://admin:s3cret@db/postgres' },
        } as k8s.KubernetesObject;
      case 'Service':
        return {
          apiVersion: 'v1',
          kind,
          metadata,
          spec: { selector: { app: 'theirs' }, ports: [{ name: 'theirs', port: 80, protocol: 'TCP' }] },
        } as k8s.KubernetesObject;
      default:
        return {
          apiVersion: 'apps/v1',
          kind,
          metadata,
          spec: {
            replicas: 0,
            selector: { matchLabels: { app: 'theirs' } },
            template: {
              metadata: { labels: { app: 'theirs' } },
              spec: { containers: [{ name: 'x', image: 'theirs:1' }] },
            },
          },
        } as k8s.KubernetesObject;
    }
  }
  const apiVersionOf = (kind: string): string => (kind === 'Deployment' ? 'apps/v1' : 'v1');

  it.each(['ConfigMap', 'Secret', 'Service', 'Deployment'])(
    'given an existing %s homeostat did not create (wearing its labels), a claim naming it gets AdoptionRefused naming it, and the object is unchanged',
    async (kind) => {
      const name = `victim-${randomSuffix()}`;
      await objects.create(unowned(kind, t.namespace, name));
      if (kind === 'Deployment') {
        // Let the cluster's Deployment controller see it first (it adds its revision annotation).
        for (let i = 0; i < 120; i++) {
          const d = await t.kc.makeApiClient(k8s.AppsV1Api).readNamespacedDeployment({ name, namespace: t.namespace });
          if ((d.status?.observedGeneration ?? 0) >= (d.metadata?.generation ?? 1)) break;
          await sleep(250);
        }
      }
      const before = await read(kind, apiVersionOf(kind), t.namespace, name);
      const claimName = `c-${randomSuffix()}`;
      await createClaim(claimName, { kind, name, data: { admin: 'taken' }, port: 9999 });
      const refused = await waitFor(claimName, 'refused', (c) => ready(c)?.reason === 'AdoptionRefused');
      expect(ready(refused)).toMatchObject({ status: 'False', reason: 'AdoptionRefused' });
      expect(ready(refused)?.message).toContain(`${kind} ${t.namespace}/${name}`);
      // Several drift checks later (4 s each), still refused and still untouched.
      await sleep(9_000);
      const after = await read(kind, apiVersionOf(kind), t.namespace, name);
      if (kind === 'Deployment') {
        // The cluster's Deployment controller writes its status (a new resourceVersion): what homeostat
        // could have changed is the spec (the generation) and the fields it manages.
        expect(after?.metadata?.generation).toBe(before?.metadata?.generation);
        expect((after?.metadata?.managedFields ?? []).map((f) => f.manager)).not.toContain('homeostat');
        expect(fingerprint(after, false)).toBe(fingerprint(before, false));
      } else {
        expect(after?.metadata?.resourceVersion).toBe(before?.metadata?.resourceVersion);
        expect(fingerprint(after)).toBe(fingerprint(before));
      }
      expect(after?.metadata?.ownerReferences).toBeUndefined();
      expect(ready(await getClaim(claimName))?.reason).toBe('AdoptionRefused');
    },
    90_000,
  );

  it('given a ConfigMap controlled by another owner, a claim naming it is refused naming that controller, and the ConfigMap is unchanged', async () => {
    const owner = await t.core.createNamespacedConfigMap({
      namespace: t.namespace,
      body: { metadata: { name: `owner-${randomSuffix()}` } },
    });
    const name = `owned-elsewhere-${randomSuffix()}`;
    await objects.create(
      unowned('ConfigMap', t.namespace, name, {
        ownerReferences: [
          {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            name: owner.metadata!.name!,
            uid: owner.metadata!.uid!,
            controller: true,
          },
        ],
      }),
    );
    const before = await read('ConfigMap', 'v1', t.namespace, name);
    const claim = `c-${randomSuffix()}`;
    await createClaim(claim, { kind: 'ConfigMap', name, data: { admin: 'taken' } });
    const refused = await waitFor(claim, 'refused', (c) => ready(c)?.reason === 'AdoptionRefused');
    expect(ready(refused)?.message).toContain(`controlled by ConfigMap ${owner.metadata!.name}`);
    expect(fingerprint(await read('ConfigMap', 'v1', t.namespace, name))).toBe(fingerprint(before));
  }, 60_000);

  it('given a refusal, when the conflicting object goes, the claim becomes Ready at the next drift check and the child carries homeostat’s labels and controller reference', async () => {
    const name = `later-${randomSuffix()}`;
    await objects.create(unowned('Secret', t.namespace, name));
    const claim = `c-${randomSuffix()}`;
    await createClaim(claim, { kind: 'Secret', name, data: { password: 'mine' } });
    const refused = await waitFor(claim, 'refused', (c) => ready(c)?.reason === 'AdoptionRefused');
    await t.core.deleteNamespacedSecret({ namespace: t.namespace, name });
    await waitFor(claim, 'Ready', (c) => c.status?.phase === 'Ready', 30_000);
    const child = await t.core.readNamespacedSecret({ namespace: t.namespace, name });
    expect(child.metadata?.labels).toMatchObject({
      'app.kubernetes.io/managed-by': 'homeostat',
      'homeostat.dev/owner-uid': refused.metadata.uid,
    });
    expect(child.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Claim', name: claim, uid: refused.metadata.uid, controller: true }),
    ]);
    expect(Buffer.from(child.data!.password!, 'base64').toString()).toBe('mine');
    // homeostat's create left no `Update` entry of its own: later applies own exactly what they send.
    expect(
      (child.metadata?.managedFields ?? []).filter((m) => m.manager === 'homeostat').map((m) => m.operation),
    ).toEqual(['Apply']);
  }, 90_000);

  it('given a child homeostat created, a key removed from the desired state is removed from the child, and an edit is put back', async () => {
    const name = `prune-${randomSuffix()}`;
    const claim = `c-${randomSuffix()}`;
    await createClaim(claim, { kind: 'ConfigMap', name, data: { a: '1', b: '2' } });
    await waitFor(claim, 'Ready', (c) => c.status?.phase === 'Ready');
    expect((await t.core.readNamespacedConfigMap({ namespace: t.namespace, name })).data).toEqual({ a: '1', b: '2' });
    await t.custom.patchNamespacedCustomObject(
      { ...claimCoords(claim), body: { spec: { data: { a: '1', b: null } } } },
      mergePatch,
    );
    await waitFor(
      claim,
      'Ready at generation 2',
      (c) => c.status?.observedGeneration === 2 && c.status.phase === 'Ready',
    );
    expect((await t.core.readNamespacedConfigMap({ namespace: t.namespace, name })).data).toEqual({ a: '1' });
    await t.core.patchNamespacedConfigMap(
      { namespace: t.namespace, name, body: { data: { a: 'edited' } } },
      mergePatch,
    );
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(250)) {
      if ((await t.core.readNamespacedConfigMap({ namespace: t.namespace, name })).data?.a === '1') return;
    }
    throw new Error('the edited child was not put back');
  }, 90_000);

  it('given a Service homeostat created whose ports another manager replaced with a port of the same name, the ports are put back and the claim stays Ready', async () => {
    const name = `ports-${randomSuffix()}`;
    const claim = `c-${randomSuffix()}`;
    await createClaim(claim, { kind: 'Service', name, port: 8080 });
    await waitFor(claim, 'Ready', (c) => c.status?.phase === 'Ready');
    // A merge patch replaces the list: port 81 under homeostat's port name, owned by another manager.
    // A plain server-side apply would merge port 8080 back beside it (ports are keyed by port and
    // protocol): two ports named "claimed", which the API server refuses with 422.
    await t.core.patchNamespacedService(
      { namespace: t.namespace, name, body: { spec: { ports: [{ name: 'claimed', port: 81, protocol: 'TCP' }] } } },
      mergePatch,
    );
    let ports: k8s.V1ServicePort[] | undefined;
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(250)) {
      ports = (await t.core.readNamespacedService({ namespace: t.namespace, name })).spec?.ports;
      if (ports?.length === 1 && ports[0]?.port === 8080) break;
    }
    expect(ports?.map((p) => [p.name, p.port])).toEqual([['claimed', 8080]]);
    // homeostat owns the port again by its apply (the merge patch's Update entry is gone), and the
    // claim is Ready: no pass failed on the 422.
    const service = await t.core.readNamespacedService({ namespace: t.namespace, name });
    const appliers = (service.metadata?.managedFields ?? []).filter((m) => m.manager === 'homeostat');
    expect(appliers.map((m) => m.operation)).toEqual(['Apply']);
    const after = await getClaim(claim);
    expect(after.status?.phase).toBe('Ready');
    expect(ready(after)?.status).toBe('True');
  }, 90_000);

  it('given a claim naming an existing object in another namespace, homeostat refuses (a namespaced owner owns children only in its namespace) and the object is unchanged', async () => {
    const name = `cross-${randomSuffix()}`;
    await objects.create(unowned('Secret', other, name));
    const before = await read('Secret', 'v1', other, name);
    const claim = `c-${randomSuffix()}`;
    await createClaim(claim, { kind: 'Secret', name, namespace: other, data: { url: 'mine' } });
    const failed = await waitFor(
      claim,
      'failed',
      (c) => ready(c)?.status === 'False' && c.status?.phase !== 'Reconciling',
    );
    expect(ready(failed)?.message).toContain('only in its own namespace');
    await sleep(5_000);
    expect(fingerprint(await read('Secret', 'v1', other, name))).toBe(fingerprint(before));
    // And nothing of that name was created in the tenant's own namespace either.
    expect(await read('Secret', 'v1', t.namespace, name)).toBeUndefined();
  }, 60_000);

  it('given a claim for a child with a huge name, it fails with the API server’s refusal and nothing is created', async () => {
    const name = `huge-${'x'.repeat(300)}`;
    const claim = `c-${randomSuffix()}`;
    await createClaim(claim, { kind: 'ConfigMap', name, data: { a: '1' } });
    const failed = await waitFor(
      claim,
      'failed',
      (c) => ready(c)?.status === 'False' && /422|Invalid|must be no more/i.test(ready(c)?.message ?? ''),
    );
    expect(failed.status?.phase).not.toBe('Ready');
    const list = await t.core.listNamespacedConfigMap({ namespace: t.namespace });
    expect(list.items.filter((c) => c.metadata?.name?.startsWith('huge-'))).toHaveLength(0);
  }, 60_000);

  it('given a condition written by another controller, it survives 10 passes that each write homeostat’s status', async () => {
    const claim = `c-${randomSuffix()}`;
    await createClaim(claim, { kind: 'ConfigMap', name: `kept-${randomSuffix()}`, data: { a: '1' } });
    let current = await waitFor(claim, 'Ready', (c) => c.status?.phase === 'Ready');
    const foreign: Condition = {
      type: 'example.com/Audited',
      status: 'True',
      reason: 'AuditPassed',
      message: 'written by another controller',
      lastTransitionTime: '2026-01-01T00:00:00Z',
    };
    await t.custom.patchNamespacedCustomObjectStatus(
      {
        ...claimCoords(claim),
        body: {
          metadata: { resourceVersion: current.metadata.resourceVersion },
          status: { conditions: [...(current.status?.conditions ?? []), foreign] },
        },
      },
      mergePatch,
    );
    for (let pass = 1; pass <= 10; pass++) {
      const generation = current.metadata.generation + 1;
      await t.custom.patchNamespacedCustomObject(
        { ...claimCoords(claim), body: { spec: { note: `pass ${pass}` } } },
        mergePatch,
      );
      current = await waitFor(
        claim,
        `observed at generation ${generation}`,
        (c) => c.status?.observedGeneration === generation && c.status.phase === 'Ready',
      );
      expect(current.status?.conditions).toContainEqual(foreign);
      expect(current.status?.conditions?.filter((c) => c.type === 'Ready')).toHaveLength(1);
    }
  }, 180_000);
});

describe('tenant isolation: the first status write of a new object, made without a read', () => {
  const t = useStack();
  const group = 'claims.example.com';
  // The activities alone, against the real API server, in a namespace no bridge watches: the test
  // decides what happens between the observation and the write.
  let activities: ReturnType<typeof createActivities>;
  beforeAll(async () => {
    await installOperatorCrds(t, claims);
    activities = createActivities({ kc: t.kc, operator: claims, logger: pino({ level: 'warn' }) });
  });
  const coords = (name: string) => ({ group, version: 'v1', namespace: t.namespace, plural: 'claims', name });
  const refOf = (name: string) => ({ group, version: 'v1', kind: 'Claim', namespace: t.namespace, name });
  async function observedNew(name: string): Promise<Extract<Observation, { found: true }>> {
    await t.custom.createNamespacedCustomObject({
      ...coords(name),
      body: { apiVersion: `${group}/v1`, kind: 'Claim', metadata: { name }, spec: { kind: 'ConfigMap', name } },
    });
    const obs = await activities.observeObject({ ref: refOf(name) });
    if (!obs.found) throw new Error(`${name} not observed`);
    expect(obs.status).toEqual({});
    return obs;
  }
  const ready = (generation: number) => ({
    observedGeneration: generation,
    phase: 'Ready' as const,
    conditions: [{ type: 'Ready', status: 'True' as const, reason: 'Reconciled', message: 'ok' }],
  });

  /** The status write of a first pass: Ready, at the version observe saw, with no read first. */
  const writeAsObserved = (name: string, obs: Extract<Observation, { found: true }>) =>
    activities.writeStatus({
      ref: refOf(name),
      uid: obs.uid,
      status: ready(obs.generation),
      expectedVersion: obs.resourceVersion,
    });

  it('given nothing changed since the observation, the status is written at the observed version', async () => {
    const name = `c-${randomSuffix()}`;
    const obs = await observedNew(name);
    const result = await writeAsObserved(name, obs);
    expect(result).toEqual({ written: true });
    const after = (await t.custom.getNamespacedCustomObject(coords(name))) as Claimed;
    expect(after.status?.phase).toBe('Ready');
    expect(after.status?.conditions?.map((c) => c.type)).toEqual(['Ready']);
  });

  it('given another controller’s condition written after the observation, the write is redone on a read and keeps it', async () => {
    const name = `c-${randomSuffix()}`;
    const obs = await observedNew(name);
    const foreign: Condition = {
      type: 'example.com/Audited',
      status: 'True',
      reason: 'AuditPassed',
      message: 'written between observe and the status write',
      lastTransitionTime: '2026-01-01T00:00:00Z',
    };
    await t.custom.patchNamespacedCustomObjectStatus(
      { ...coords(name), body: { status: { conditions: [foreign] } } },
      mergePatch,
    );
    const result = await writeAsObserved(name, obs);
    expect(result).toEqual({ written: true });
    const after = (await t.custom.getNamespacedCustomObject(coords(name))) as Claimed;
    expect(after.status?.phase).toBe('Ready');
    expect(after.status?.conditions).toContainEqual(foreign);
  });

  it('given the object deleted and a new one of the same name created, the new one is left alone', async () => {
    const name = `c-${randomSuffix()}`;
    const obs = await observedNew(name);
    // Its finalizer (added by the observation) removed, so the delete completes at once.
    await t.custom.patchNamespacedCustomObject(
      { ...coords(name), body: { metadata: { finalizers: null } } },
      mergePatch,
    );
    await t.custom.deleteNamespacedCustomObject(coords(name));
    await t.custom.createNamespacedCustomObject({
      ...coords(name),
      body: { apiVersion: `${group}/v1`, kind: 'Claim', metadata: { name }, spec: { kind: 'ConfigMap', name } },
    });
    const result = await writeAsObserved(name, obs);
    expect(result).toEqual({ written: false, reason: 'gone' });
    const after = (await t.custom.getNamespacedCustomObject(coords(name))) as Claimed;
    expect(after.metadata.uid).not.toBe(obs.uid);
    expect(after.status).toBeUndefined();
  });
});

describe('tenant isolation: the built-in App named like an existing Service', () => {
  const t = useStack();
  let homeostat: InProcessHomeostat | undefined;

  beforeAll(async () => {
    installBuiltinCrds(t);
    homeostat = await startInProcessHomeostat(t, {
      taskQueue: `apps-${randomSuffix()}`,
      logger: pino({ level: 'warn' }),
      bridge: {},
    });
  }, 120_000);

  afterAll(async () => {
    await homeostat?.stop();
  });

  it('given an unowned Service, an App of the same name gets AdoptionRefused, and the Service keeps its ports and gains no owner', async () => {
    const name = `web-${randomSuffix()}`;
    await t.core.createNamespacedService({
      namespace: t.namespace,
      body: {
        metadata: { name },
        spec: { selector: { app: 'theirs' }, ports: [{ name: 'theirs', port: 80, protocol: 'TCP' }] },
      },
    });
    const before = await t.core.readNamespacedService({ namespace: t.namespace, name });
    await t.custom.createNamespacedCustomObject({
      group: 'homeostat.dev',
      version: 'v1alpha1',
      namespace: t.namespace,
      plural: 'apps',
      body: {
        apiVersion: 'homeostat.dev/v1alpha1',
        kind: 'App',
        metadata: { name },
        spec: { image: 'registry.spr.com/pony-spawner:v2.1.0', replicas: 1, port: 8080 },
      },
    });
    let last: Claimed | undefined;
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(250)) {
      last = (await t.custom.getNamespacedCustomObject({
        group: 'homeostat.dev',
        version: 'v1alpha1',
        namespace: t.namespace,
        plural: 'apps',
        name,
      })) as Claimed;
      if (last.status?.conditions?.some((c) => c.type === 'Ready' && c.reason === 'AdoptionRefused')) break;
    }
    const refusal = last?.status?.conditions?.find((c) => c.type === 'Ready');
    expect(refusal).toMatchObject({ status: 'False', reason: 'AdoptionRefused' });
    expect(refusal?.message).toContain(`Service ${t.namespace}/${name}`);
    const after = await t.core.readNamespacedService({ namespace: t.namespace, name });
    expect(after.metadata?.resourceVersion).toBe(before.metadata?.resourceVersion);
    expect(after.spec?.ports).toEqual(before.spec?.ports);
    expect(after.metadata?.ownerReferences).toBeUndefined();
  }, 90_000);
});
