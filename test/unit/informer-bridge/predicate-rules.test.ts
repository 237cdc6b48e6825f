/**
 * The bridge's predicates at their edges: finalizer lists compared in order, a finalizer swapped
 * rather than added, metadata-only kinds, owner reference changes, cluster-scoped owners, the
 * status annotations of kinds homeostat does not define, and API versions of the core group.
 * Written for mutants of informer-bridge/predicates.ts that survived (issue 17).
 */
import { isBehind, ownersOf, parseApiVersion, relevantChange } from '../../../informer-bridge/predicates';
import type { KubeObject, WatchedResource } from '../../../informer-bridge/types';

const apps: WatchedResource = {
  group: 'homeostat.dev',
  version: 'v1alpha1',
  plural: 'apps',
  kind: 'App',
  namespaced: true,
};
const obj = (meta: Partial<KubeObject['metadata']> = {}, rest: Partial<KubeObject> = {}): KubeObject => ({
  apiVersion: 'homeostat.dev/v1alpha1',
  kind: 'App',
  metadata: { name: 'a', namespace: 'ns', uid: 'u1', resourceVersion: '1', generation: 1, ...meta },
  spec: { replicas: 3 },
  ...rest,
});

describe('predicate rules at their edges', () => {
  it('given finalizers reordered, swapped or one removed among several, it signals; one more added to a live object, it does not', () => {
    const f = (...finalizers: string[]) => obj({ finalizers });
    expect(relevantChange(apps, f('a', 'b'), f('b', 'a'))).toBe('finalizers');
    expect(relevantChange(apps, f('a'), f('b'))).toBe('finalizers'); // same count, another finalizer
    expect(relevantChange(apps, f('a', 'b'), f('a'))).toBe('finalizers');
    expect(relevantChange(apps, f('a'), f('a', 'b'))).toBeUndefined();
    expect(relevantChange(apps, obj(), f())).toBeUndefined(); // absent and empty are the same list
    expect(relevantChange(apps, f('a'), f('a'))).toBeUndefined();
  });

  it('given labels or annotations changed on a kind that declares none, it does not signal', () => {
    expect(relevantChange(apps, obj(), obj({ labels: { tier: 'gold' }, annotations: { x: 'y' } }))).toBeUndefined();
    const declared = { ...apps, relevantLabels: ['tier'], relevantAnnotations: ['pause'] };
    expect(relevantChange(declared, obj({ labels: { tier: 'gold' } }), obj())).toBe('labels');
    expect(relevantChange(declared, obj({ annotations: { pause: 'true' } }), obj())).toBe('annotations');
    expect(
      relevantChange(declared, obj({ labels: { tier: 'gold' } }), obj({ labels: { tier: 'gold' } })),
    ).toBeUndefined();
  });

  it('given a metadata-only kind without generations, a new resourceVersion is the change', () => {
    const secrets: WatchedResource = {
      group: '',
      version: 'v1',
      plural: 'secrets',
      kind: 'Secret',
      namespaced: true,
      metadataOnly: true,
    };
    const s = (resourceVersion: string): KubeObject => ({ metadata: { name: 's', uid: 'u', resourceVersion } });
    expect(relevantChange(secrets, s('1'), s('2'))).toBe('resourceVersion');
    expect(relevantChange(secrets, s('1'), s('1'))).toBeUndefined();
  });

  it('given a generation on either side only, it is a generation change', () => {
    const cm: WatchedResource = { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true };
    const noGen: KubeObject = { metadata: { name: 'c', uid: 'u', resourceVersion: '1' }, data: { k: '1' } };
    expect(relevantChange(cm, noGen, { ...noGen, metadata: { ...noGen.metadata, generation: 1 } })).toBe('generation');
    expect(relevantChange(cm, { ...noGen, metadata: { ...noGen.metadata, generation: 1 } }, noGen)).toBe('generation');
  });

  it('given a child whose owner references change, it signals only when owners are watched for that kind', () => {
    const owned = { ...apps, kind: 'ConfigMap', owners: [{ group: 'homeostat.dev', kind: 'App' }] };
    const ref = (uid: string) => ({ apiVersion: 'homeostat.dev/v1alpha1', kind: 'App', name: 'p', uid });
    const before = obj({ ownerReferences: [ref('u1')] });
    expect(relevantChange(owned, before, obj({ ownerReferences: [ref('u2')] }))).toBe('ownerReferences');
    expect(relevantChange(owned, before, obj({ ownerReferences: [] }))).toBe('ownerReferences');
    expect(relevantChange(owned, before, obj({ ownerReferences: [ref('u1')] }))).toBeUndefined();
    expect(relevantChange(apps, before, obj({ ownerReferences: [ref('u2')] }))).toBeUndefined();
    for (const field of ['apiVersion', 'kind', 'name'] as const) {
      expect(relevantChange(owned, before, obj({ ownerReferences: [{ ...ref('u1'), [field]: 'x' }] }))).toBe(
        'ownerReferences',
      );
    }
  });

  it('given API versions, the core group is empty and a group/version splits at the slash', () => {
    expect(parseApiVersion('v1')).toEqual({ group: '', version: 'v1' });
    expect(parseApiVersion('apps/v1')).toEqual({ group: 'apps', version: 'v1' });
    expect(parseApiVersion('homeostat.dev/v1alpha1')).toEqual({ group: 'homeostat.dev', version: 'v1alpha1' });
  });

  it('given a cluster-scoped child, its owner has no namespace; owners of the core group map too', () => {
    const nodes: WatchedResource = {
      group: '',
      version: 'v1',
      plural: 'nodes',
      kind: 'Node',
      namespaced: false,
      owners: [{ group: '', kind: 'Namespace' }],
    };
    expect(
      ownersOf(nodes, {
        metadata: { name: 'n', ownerReferences: [{ apiVersion: 'v1', kind: 'Namespace', name: 'team', uid: 't' }] },
      }),
    ).toEqual([{ ref: { group: '', version: 'v1', kind: 'Namespace', namespace: '', name: 'team' }, uid: 't' }]);
    expect(
      ownersOf(
        { ...nodes, owners: [] },
        { metadata: { name: 'n', ownerReferences: [{ apiVersion: 'v1', kind: 'Namespace', name: 'team', uid: 't' }] } },
      ),
    ).toEqual([]);
  });

  it('given several owners, controller references come first and the others keep their order', () => {
    const owned: WatchedResource = { ...apps, kind: 'ConfigMap', owners: [{ group: 'homeostat.dev', kind: 'App' }] };
    const r = (name: string, controller?: boolean) => ({
      apiVersion: 'homeostat.dev/v1alpha1',
      kind: 'App',
      name,
      uid: name,
      ...(controller === undefined ? {} : { controller }),
    });
    const names = ownersOf(owned, obj({ ownerReferences: [r('x', false), r('y'), r('c', true), r('z')] })).map(
      (o) => o.ref.name,
    );
    expect(names).toEqual(['c', 'x', 'y', 'z']);
  });

  it('given the observed generation in the status annotation (kinds homeostat does not define), it is used over status', () => {
    const annotated = (value: string, status?: KubeObject['status']) =>
      obj({ generation: 4, annotations: { 'homeostat.dev/observed-generation': value } }, status ? { status } : {});
    expect(isBehind(annotated('4'))).toBe(false);
    expect(isBehind(annotated('3', { observedGeneration: 4 }))).toBe(true);
    expect(isBehind(annotated('4', { observedGeneration: 3 }))).toBe(false);
  });

  it('given a kind without generations, it is never behind unless it is being deleted', () => {
    expect(isBehind({ metadata: { name: 'c' } })).toBe(false);
    expect(isBehind({ metadata: { name: 'c', deletionTimestamp: 'now' } })).toBe(true);
  });
});
