import { isBehind, type KubeObject, ownersOf, relevantChange, type WatchedResource } from '../../../informer-bridge';

const widget: WatchedResource = {
  group: 'homeostat.dev',
  version: 'v1alpha1',
  plural: 'apps',
  kind: 'App',
  namespaced: true,
  relevantLabels: ['tier'],
  relevantAnnotations: ['homeostat.dev/pause'],
};

function obj(meta: Partial<KubeObject['metadata']> = {}, rest: Partial<KubeObject> = {}): KubeObject {
  return {
    apiVersion: 'homeostat.dev/v1alpha1',
    kind: 'App',
    metadata: { name: 'pony-spawner', namespace: 'pony-prod', uid: 'u1', resourceVersion: '1', generation: 1, ...meta },
    spec: { replicas: 3 },
    ...rest,
  };
}

/** An owned kind: the App's Deployments. */
const deployments: WatchedResource = {
  group: 'apps',
  version: 'v1',
  plural: 'deployments',
  kind: 'Deployment',
  namespaced: true,
  owners: [{ group: 'homeostat.dev', kind: 'App' }],
};

describe('predicates: relevantChange', () => {
  it('given an owned kind watched for its status, a status change signals; without watchStatus it does not', () => {
    const watched: WatchedResource = { ...deployments, watchStatus: true };
    const before = obj({ resourceVersion: '5' }, { status: { observedGeneration: 1, readyReplicas: 1 } });
    const after = obj({ resourceVersion: '6' }, { status: { observedGeneration: 1, readyReplicas: 2 } });
    expect(relevantChange(watched, before, after)).toBe('status');
    expect(relevantChange(watched, before, obj({ resourceVersion: '6' }, { status: before.status }))).toBeUndefined();
    expect(relevantChange(watched, obj(), obj({ resourceVersion: '2' }, { status: { readyReplicas: 0 } }))).toBe(
      'status',
    );
    expect(relevantChange(deployments, before, after)).toBeUndefined();
  });

  it('given a status-only update (homeostat’s own status write), it ignores it', () => {
    const before = obj();
    const after = obj({ resourceVersion: '2' }, { status: { observedGeneration: 1, phase: 'Ready' } });
    expect(relevantChange(widget, before, after)).toBeUndefined();
  });

  it('given a generation change, a deletionTimestamp, a removed finalizer or a finalizer change while deleting, it signals', () => {
    expect(relevantChange(widget, obj(), obj({ generation: 2 }))).toBe('generation');
    expect(relevantChange(widget, obj(), obj({ deletionTimestamp: '2026-12-02T10:00:00Z' }))).toBe('deletionTimestamp');
    const finalized = obj({ finalizers: ['homeostat.dev/finalizer'] });
    expect(relevantChange(widget, finalized, obj())).toBe('finalizers');
    const deleting = { deletionTimestamp: '2026-12-02T10:00:00Z' };
    expect(relevantChange(widget, obj(deleting), obj({ ...deleting, finalizers: ['x.dev/y'] }))).toBe('finalizers');
  });

  it('given only a finalizer added to a live object (homeostat’s first pass adds its own), it ignores it', () => {
    expect(relevantChange(widget, obj(), obj({ finalizers: ['homeostat.dev/finalizer'] }))).toBeUndefined();
  });

  it('given label and annotation changes, it signals only for the declared keys', () => {
    expect(relevantChange(widget, obj(), obj({ labels: { team: 'ponies' } }))).toBeUndefined();
    expect(relevantChange(widget, obj(), obj({ labels: { tier: 'gold' } }))).toBe('labels');
    expect(relevantChange(widget, obj(), obj({ annotations: { note: 'x' } }))).toBeUndefined();
    expect(relevantChange(widget, obj(), obj({ annotations: { 'homeostat.dev/pause': 'true' } }))).toBe('annotations');
  });

  it('given the same name with a new UID, it reports a new object', () => {
    expect(relevantChange(widget, obj(), obj({ uid: 'u2' }))).toBe('uid');
  });

  it('given a kind without generation (ConfigMap), data changes signal and metadata churn does not', () => {
    const cm: WatchedResource = { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true };
    const a: KubeObject = { metadata: { name: 'c', uid: 'u', resourceVersion: '1' }, data: { k: '1' } };
    expect(
      relevantChange(cm, a, { ...a, metadata: { ...a.metadata, resourceVersion: '2', annotations: { x: 'y' } } }),
    ).toBeUndefined();
    expect(relevantChange(cm, a, { ...a, data: { k: '2' } })).toBe('content');
  });
});

describe('owner mapping: ownersOf', () => {
  const child = (ownerReferences: NonNullable<KubeObject['metadata']['ownerReferences']>): KubeObject => ({
    metadata: { name: 'pony-spawner', namespace: 'pony-prod', uid: 'd1', ownerReferences },
  });

  it('given an ownerReference to a mapped owner kind, it returns the owner reference in the child’s namespace', () => {
    const owners = ownersOf(
      deployments,
      child([{ apiVersion: 'homeostat.dev/v1alpha1', kind: 'App', name: 'pony-spawner', uid: 'u1', controller: true }]),
    );
    expect(owners).toEqual([
      {
        ref: { group: 'homeostat.dev', version: 'v1alpha1', kind: 'App', namespace: 'pony-prod', name: 'pony-spawner' },
        uid: 'u1',
      },
    ]);
  });

  it('given owners of other kinds or groups, it ignores them; the controller reference comes first', () => {
    const owners = ownersOf(
      deployments,
      child([
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'r1' },
        { apiVersion: 'other.dev/v1', kind: 'App', name: 'imposter', uid: 'x1' },
        { apiVersion: 'homeostat.dev/v1alpha1', kind: 'App', name: 'second', uid: 'u2' },
        { apiVersion: 'homeostat.dev/v1alpha1', kind: 'App', name: 'first', uid: 'u1', controller: true },
      ]),
    );
    expect(owners.map((o) => o.ref.name)).toEqual(['first', 'second']);
  });

  it('given a primary kind (no owners configured) or no ownerReferences, it returns nothing', () => {
    expect(
      ownersOf(widget, child([{ apiVersion: 'homeostat.dev/v1alpha1', kind: 'App', name: 'a', uid: 'u' }])),
    ).toEqual([]);
    expect(ownersOf(deployments, { metadata: { name: 'x' } })).toEqual([]);
  });
});

describe('safety net: isBehind', () => {
  it('given generation equal to status.observedGeneration, the object is converged', () => {
    expect(isBehind(obj({ generation: 3 }, { status: { observedGeneration: 3 } }))).toBe(false);
  });
  it('given a newer generation, no status, or a pending deletion, the object is behind', () => {
    expect(isBehind(obj({ generation: 4 }, { status: { observedGeneration: 3 } }))).toBe(true);
    expect(isBehind(obj({ generation: 1 }))).toBe(true);
    expect(isBehind(obj({ generation: 3, deletionTimestamp: 'x' }, { status: { observedGeneration: 3 } }))).toBe(true);
  });
});
