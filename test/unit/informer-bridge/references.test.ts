import {
  isBehind,
  type KubeObject,
  maxReferencesPerObject,
  ReferenceIndex,
  referenceKey,
  referenceMappings,
  referencedKeys,
  relevantChange,
  type WatchedResource,
} from '../../../informer-bridge';
import type { ReferenceWatch } from '../../../core/reconciler';

const secrets: WatchedResource = {
  group: '',
  version: 'v1',
  plural: 'secrets',
  kind: 'Secret',
  namespaced: true,
  referrers: [{ group: 'homeostat.dev', kind: 'PostgresDatabase' }],
  metadataOnly: true,
};
const clusterThings: WatchedResource = {
  group: 'example.com',
  version: 'v1',
  plural: 'things',
  kind: 'Thing',
  namespaced: false,
  referrers: [{ group: 'homeostat.dev', kind: 'PostgresDatabase' }],
  metadataOnly: true,
};

const db = (spec: unknown, namespace = 'pony-prod'): KubeObject => ({
  apiVersion: 'homeostat.dev/v1alpha1',
  kind: 'PostgresDatabase',
  metadata: { name: 'ranch', namespace, uid: 'u1', resourceVersion: '1', generation: 1 },
  spec,
});

const bySpec: ReferenceWatch['referencedBy'] = (o) =>
  ((o.spec as { refs?: { name: string; namespace?: string }[] }).refs ?? []).map((r) => r);

describe('references: the objects a primary refers to', () => {
  const errors: unknown[] = [];
  const onError = (err: unknown): void => void errors.push(err);
  beforeEach(() => (errors.length = 0));

  it('given names without a namespace, they are read in the referring object’s namespace; explicit namespaces are kept', () => {
    const keys = referencedKeys(
      db({ refs: [{ name: 'admin' }, { name: 'shared', namespace: 'platform' }] }),
      true,
      [{ resource: secrets, referencedBy: bySpec }],
      onError,
    );
    expect(keys).toEqual([
      referenceKey('', 'Secret', 'pony-prod', 'admin'),
      referenceKey('', 'Secret', 'platform', 'shared'),
    ]);
  });

  it('given a cluster-scoped referenced kind, the namespace is ignored; a cluster-scoped referrer has none to lend', () => {
    expect(
      referencedKeys(
        db({ refs: [{ name: 'x', namespace: 'y' }] }),
        true,
        [{ resource: clusterThings, referencedBy: bySpec }],
        onError,
      ),
    ).toEqual([referenceKey('example.com', 'Thing', '', 'x')]);
    expect(
      referencedKeys(
        db({ refs: [{ name: 'admin' }] }, ''),
        false,
        [{ resource: secrets, referencedBy: bySpec }],
        onError,
      ),
    ).toEqual([referenceKey('', 'Secret', '', 'admin')]);
  });

  it('given a hostile spec (a map function that throws, returns a string, or names that are not strings), it refers to nothing and reports the error', () => {
    const throws: ReferenceWatch['referencedBy'] = (o) => [{ name: (o.spec as { a: { b: string } }).a.b }];
    const returnsString = (() => 'admin') as unknown as ReferenceWatch['referencedBy'];
    expect(referencedKeys(db({}), true, [{ resource: secrets, referencedBy: throws }], onError)).toEqual([]);
    expect(referencedKeys(db({}), true, [{ resource: secrets, referencedBy: returnsString }], onError)).toEqual([]);
    expect(errors).toHaveLength(2);
    const junk = db({ refs: [{ name: 42 }, null, { name: '' }, { name: { toString: 'x' } }, { name: 'ok' }] });
    expect(referencedKeys(junk, true, [{ resource: secrets, referencedBy: bySpec }], onError)).toEqual([
      referenceKey('', 'Secret', 'pony-prod', 'ok'),
    ]);
  });

  it(`given a spec naming 100,000 objects, at most ${maxReferencesPerObject} are indexed and the rest reported`, () => {
    const refs = Array.from({ length: 100_000 }, (_, i) => ({ name: `s${i}` }));
    const keys = referencedKeys(db({ refs }), true, [{ resource: secrets, referencedBy: bySpec }], onError);
    expect(keys).toHaveLength(maxReferencesPerObject);
    expect(errors).toHaveLength(1);
  });
});

describe('references: the index from referenced objects to their referrers', () => {
  it('given primaries that refer to shared and own Secrets, a Secret finds exactly its referrers, and updates and deletes are followed', () => {
    const index = new ReferenceIndex<string>();
    index.set('a', ['s/shared', 's/a-only'], 'A');
    index.set('b', ['s/shared'], 'B');
    index.set('c', [], 'C');
    expect(index.referrersOf('s/shared').sort()).toEqual(['A', 'B']);
    expect(index.referrersOf('s/a-only')).toEqual(['A']);
    expect(index.referrersOf('s/none')).toEqual([]);
    expect(index.size).toBe(2);
    index.set('a', ['s/other'], 'A2'); // its spec now names another Secret
    expect(index.referrersOf('s/shared')).toEqual(['B']);
    expect(index.referrersOf('s/a-only')).toEqual([]);
    expect(index.referrersOf('s/other')).toEqual(['A2']);
    index.delete('b');
    expect(index.referrersOf('s/shared')).toEqual([]);
    index.delete('missing');
    expect(index.size).toBe(1);
  });

  it('given a referenced resource whose referrer the operator does not back with a references entry, it refuses to start', () => {
    const reconcilers = [{ plan: { group: 'homeostat.dev', kind: 'PostgresDatabase' }, references: [] }];
    expect(() => referenceMappings([secrets], reconcilers)).toThrow(/no reconciler of that kind referencing Secret/);
    const ok = referenceMappings(
      [secrets],
      [{ plan: reconcilers[0]!.plan, references: [{ apiVersion: 'v1', kind: 'Secret', referencedBy: bySpec }] }],
    );
    expect(ok.get('homeostat.dev/PostgresDatabase')).toHaveLength(1);
  });
});

describe('predicates on kinds watched as metadata only', () => {
  const ownedSecrets: WatchedResource = { ...secrets, owners: [{ group: 'homeostat.dev', kind: 'PostgresDatabase' }] };
  const meta = (resourceVersion: string, labels: Record<string, string> = {}): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'ranch-connection', namespace: 'pony-prod', uid: 's1', resourceVersion, labels },
  });

  it('given a generation-less kind without content to compare, a new resourceVersion is the change; the same one is none', () => {
    expect(relevantChange(ownedSecrets, meta('1'), meta('2'))).toBe('resourceVersion');
    expect(relevantChange(ownedSecrets, meta('1'), meta('1'))).toBeUndefined();
  });
});

describe('predicates on kinds homeostat reports through annotations', () => {
  const namespaces: WatchedResource = {
    group: '',
    version: 'v1',
    plural: 'namespaces',
    kind: 'Namespace',
    namespaced: false,
  };
  const ns = (annotations: Record<string, string> = {}, finalizers?: string[]): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'tenant-a', uid: 'n1', resourceVersion: '1', annotations, ...(finalizers ? { finalizers } : {}) },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  });

  it('given homeostat’s own status annotations and finalizer on a Namespace, the bridge does not signal (no loop)', () => {
    const written = ns({ 'homeostat.dev/phase': 'Ready', 'homeostat.dev/observed-generation': '0' }, [
      'homeostat.dev/finalizer',
    ]);
    expect(relevantChange(namespaces, ns(), ns({}, ['homeostat.dev/finalizer']))).toBeUndefined();
    expect(relevantChange(namespaces, ns({}, ['homeostat.dev/finalizer']), written)).toBeUndefined();
    expect(isBehind(written)).toBe(false);
  });

  it('given a kind with generations reported through annotations, the safety net reads the observed generation there', () => {
    const deployment = (observed: string): KubeObject => ({
      metadata: { name: 'd', generation: 3, annotations: { 'homeostat.dev/observed-generation': observed } },
      status: { observedGeneration: 1 },
    });
    expect(isBehind(deployment('3'))).toBe(false);
    expect(isBehind(deployment('2'))).toBe(true);
  });
});
