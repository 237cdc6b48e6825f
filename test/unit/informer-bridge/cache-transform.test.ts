/**
 * What the bridge's cache keeps (issue 31): an owned or referenced object only what the bridge uses, a
 * primary object no annotation it does not read, whatever a tenant wrote into them.
 */
import { Status } from '@grpc/grpc-js/build/src/constants';
import { ServiceError } from '@temporalio/client';
import {
  cacheTransformFor,
  contentDigestKey,
  maxFinalizersKept,
  maxOwnerReferencesKept,
} from '../../../informer-bridge/cache-transform';
import { permanentDeliveryFailure } from '../../../informer-bridge/delivery-failures';
import { relevantChange } from '../../../informer-bridge/predicates';
import type { KubeObject, WatchedResource } from '../../../informer-bridge/types';

const owned: WatchedResource = {
  group: '',
  version: 'v1',
  plural: 'configmaps',
  kind: 'ConfigMap',
  namespaced: true,
  owners: [{ group: 'homeostat.dev', kind: 'App' }],
  metadataOnly: true,
};
const big = 'x'.repeat(200 * 1024);
const ref = (name: string, controller = false) => ({
  apiVersion: 'homeostat.dev/v1alpha1',
  kind: 'App',
  name,
  uid: `uid-${name}`,
  ...(controller ? { controller: true } : {}),
});

describe('cache transform', () => {
  it('given an owned object with a 200 KB annotation, labels, managedFields and 200 ownerReferences, it keeps identity, version, deletion and a bounded list of owner references, controller first', () => {
    const obj: KubeObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'c',
        namespace: 'n',
        uid: 'u',
        resourceVersion: '7',
        deletionTimestamp: '2025-01-01T00:00:00Z',
        labels: { 'app.kubernetes.io/managed-by': 'homeostat', other: 'x' },
        annotations: { huge: big },
        managedFields: [{ manager: 'kubectl' }],
        ownerReferences: [
          ...Array.from({ length: 200 }, (_, i) => ref(`forged-${i}`)),
          { apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'p' },
          ref('real', true),
        ],
      },
    };
    const kept = cacheTransformFor(owned)(obj);
    expect(kept.metadata.annotations).toBeUndefined();
    expect(kept.metadata.labels).toBeUndefined();
    expect(kept.metadata.managedFields).toBeUndefined();
    expect(kept.metadata.ownerReferences).toHaveLength(maxOwnerReferencesKept);
    expect(kept.metadata.ownerReferences?.[0]).toEqual(ref('real', true));
    expect(kept.metadata.ownerReferences?.some((o) => o.kind === 'Pod')).toBe(false);
    expect(kept.metadata).toMatchObject({ name: 'c', namespace: 'n', uid: 'u', resourceVersion: '7' });
    expect(JSON.stringify(kept).length).toBeLessThan(2_000);
  });

  it('given declared relevant labels and annotations, it keeps those keys only', () => {
    const r: WatchedResource = { ...owned, relevantLabels: ['tier'], relevantAnnotations: ['note'] };
    const kept = cacheTransformFor(r)({
      metadata: { name: 'c', labels: { tier: 'a', x: 'y' }, annotations: { note: 'n', huge: big } },
    });
    expect(kept.metadata.labels).toEqual({ tier: 'a' });
    expect(kept.metadata.annotations).toEqual({ note: 'n' });
  });

  it('given many finalizers, it keeps one digest that still changes with them', () => {
    const many = Array.from({ length: maxFinalizersKept + 1 }, (_, i) => `example.com/f${i}`);
    const t = cacheTransformFor(owned);
    const a = t({ metadata: { name: 'c', finalizers: many } });
    const b = t({ metadata: { name: 'c', finalizers: [...many, 'example.com/more'] } });
    expect(a.metadata.finalizers).toHaveLength(1);
    expect(a.metadata.finalizers).not.toEqual(b.metadata.finalizers);
    expect(t({ metadata: { name: 'c', finalizers: ['one'] } }).metadata.finalizers).toEqual(['one']);
  });

  it('given a kind listed whole without generations, it keeps a digest of the content, so a change of data is still a change', () => {
    const whole: WatchedResource = { ...owned, metadataOnly: false };
    const t = cacheTransformFor(whole);
    const a = t({ metadata: { name: 'c', resourceVersion: '1' }, data: { a: big } });
    const b = t({ metadata: { name: 'c', resourceVersion: '2' }, data: { a: `${big}!` } });
    expect(a.data).toBeUndefined();
    expect(typeof a[contentDigestKey]).toBe('string');
    expect(relevantChange(whole, a, b)).toBe('content');
    expect(relevantChange(whole, a, { ...a, metadata: { ...a.metadata, resourceVersion: '2' } })).toBeUndefined();
  });

  it('given a kind whose status matters, it keeps the status and nothing of the spec', () => {
    const kept = cacheTransformFor({ ...owned, metadataOnly: false, watchStatus: true })({
      metadata: { name: 'd' },
      spec: { template: { env: 'secret' } },
      status: { readyReplicas: 1 },
    });
    expect(kept).toEqual({ metadata: { name: 'd' }, status: { readyReplicas: 1 } });
  });

  it('given a primary object, it keeps spec, labels, status and only the annotations homeostat reads', () => {
    const primary: WatchedResource = {
      group: 'homeostat.dev',
      version: 'v1',
      plural: 'apps',
      kind: 'App',
      namespaced: true,
    };
    const kept = cacheTransformFor({ ...primary, relevantAnnotations: ['homeostat.dev/drift-check'] })({
      metadata: {
        name: 'a',
        labels: { l: 'v' },
        annotations: { huge: big, 'homeostat.dev/observed-generation': '2', 'homeostat.dev/drift-check': 'x' },
      },
      spec: { s: 1 },
      status: { observedGeneration: 2 },
    });
    expect(kept).toEqual({
      metadata: {
        name: 'a',
        labels: { l: 'v' },
        annotations: { 'homeostat.dev/observed-generation': '2', 'homeostat.dev/drift-check': 'x' },
      },
      spec: { s: 1 },
      status: { observedGeneration: 2 },
    });
  });
});

describe('permanent delivery failures', () => {
  const grpc = (code: number) =>
    Object.assign(new Error(`${code}`), { code, details: 'd', metadata: { internalRepr: new Map(), options: {} } });

  it('given Temporal answering INVALID_ARGUMENT or OUT_OF_RANGE (wrapped by the client), it names the reason', () => {
    expect(permanentDeliveryFailure(new ServiceError('x', { cause: grpc(Status.INVALID_ARGUMENT) }))).toBe(
      'invalid_argument',
    );
    expect(permanentDeliveryFailure(grpc(Status.OUT_OF_RANGE))).toBe('out_of_range');
  });

  it('given an unavailable server, a deadline, a rate limit, a missing namespace or a plain error, it retries', () => {
    for (const code of [
      Status.UNAVAILABLE,
      Status.DEADLINE_EXCEEDED,
      Status.RESOURCE_EXHAUSTED,
      Status.NOT_FOUND,
      Status.FAILED_PRECONDITION,
    ]) {
      expect(permanentDeliveryFailure(new ServiceError('x', { cause: grpc(code) }))).toBeUndefined();
    }
    expect(permanentDeliveryFailure(new Error('socket hang up'))).toBeUndefined();
    expect(permanentDeliveryFailure(undefined)).toBeUndefined();
  });
});
