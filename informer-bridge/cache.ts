/**
 * The bridge's local cache: one store per watched resource, keyed by `namespace/name`, holding
 * transformed objects (by default trimmed: managedFields and the last-applied annotation dropped, the
 * bulk of most objects' metadata; the bridge passes each resource's transform of cache-transform.ts,
 * which keeps only what it uses). Sizes are estimated per object from the trimmed JSON, so the cache's memory is visible
 * as a metric; the measured heap cost per object is reported by the tests.
 */
import type { KubeObject } from './types';

/** The annotation `kubectl apply` writes: a full copy of the object, useless to the bridge. */
export const lastAppliedAnnotation = 'kubectl.kubernetes.io/last-applied-configuration';

/** Returns the object without `metadata.managedFields` and the last-applied annotation. */
export function trimObject(obj: KubeObject): KubeObject {
  const { managedFields: _managedFields, annotations, ...metadata } = obj.metadata;
  let kept = annotations;
  if (annotations && lastAppliedAnnotation in annotations) {
    const { [lastAppliedAnnotation]: _dropped, ...rest } = annotations;
    kept = Object.keys(rest).length ? rest : undefined;
  }
  return { ...obj, metadata: kept ? { ...metadata, annotations: kept } : metadata };
}

/** The cache key of an object: `namespace/name`, or `name` for cluster-scoped objects. */
export function objectKey(obj: Pick<KubeObject, 'metadata'>): string {
  const { namespace, name } = obj.metadata;
  return namespace ? `${namespace}/${name ?? ''}` : (name ?? '');
}

/** Estimated bytes of a trimmed object (UTF-16 strings of its JSON plus per-object overhead). */
export function estimateBytes(obj: KubeObject): number {
  return JSON.stringify(obj).length * 2 + 64;
}

/** The objects of one watched resource. */
export class ObjectCache {
  private readonly objects = new Map<string, KubeObject>();
  private readonly sizes = new Map<string, number>();
  private bytes = 0;

  /**
   * @param transform what the cache keeps of an object, applied as it enters (client-go's
   *   `SetTransform`); a caller may apply it early ({@link ObjectCache.store}) so that nothing larger is
   *   held meanwhile @default {@link trimObject}
   */
  constructor(readonly transform: (obj: KubeObject) => KubeObject = trimObject) {}

  /** Number of cached objects. */
  get size(): number {
    return this.objects.size;
  }

  /** Estimated bytes of all cached objects. */
  get estimatedBytes(): number {
    return this.bytes;
  }

  /** The cached object under `key`. */
  get(key: string): KubeObject | undefined {
    return this.objects.get(key);
  }

  /** Transforms and stores `obj`; returns the previous object under its key. */
  put(obj: KubeObject): { previous: KubeObject | undefined; stored: KubeObject } {
    return this.store(this.transform(obj));
  }

  /** Stores an object already passed through {@link ObjectCache.transform}; returns the previous one. */
  store(stored: KubeObject): { previous: KubeObject | undefined; stored: KubeObject } {
    const key = objectKey(stored);
    const previous = this.objects.get(key);
    const size = estimateBytes(stored);
    this.bytes += size - (this.sizes.get(key) ?? 0);
    this.objects.set(key, stored);
    this.sizes.set(key, size);
    return { previous, stored };
  }

  /** Removes the object under `key`; returns it. */
  delete(key: string): KubeObject | undefined {
    const previous = this.objects.get(key);
    this.bytes -= this.sizes.get(key) ?? 0;
    this.objects.delete(key);
    this.sizes.delete(key);
    return previous;
  }

  /** Every key in the cache. */
  keys(): string[] {
    return [...this.objects.keys()];
  }

  /** Every cached object. */
  values(): IterableIterator<KubeObject> {
    return this.objects.values();
  }
}
