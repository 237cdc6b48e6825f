/**
 * The plain data the bridge is configured with and works on: watched resources (fed by the
 * reconcilers), the trimmed Kubernetes objects of its cache, and the injectable clock.
 */
/** The kind of an owner that a watched child kind maps to (through `metadata.ownerReferences`). */
export interface OwnerKind {
  /** API group of the owner; `''` for the core group. */
  readonly group: string;
  readonly kind: string;
}

/**
 * One resource the bridge lists and watches. A resource without {@link WatchedResource.owners} and
 * {@link WatchedResource.referrers} is a primary kind: its objects get their own workflow. A resource
 * with `owners` is an owned kind: its changes signal the owner's workflow with reason `child-changed`.
 * A resource with `referrers` is a referenced kind: its changes signal, with reason
 * `referenced-changed`, every primary object whose reconciler's `references` name the changed object.
 * One resource may be both owned and referenced.
 */
export interface WatchedResource {
  /** API group; `''` for the core group. */
  readonly group: string;
  readonly version: string;
  /** The resource's plural name in URLs (`deployments`). */
  readonly plural: string;
  readonly kind: string;
  /** Whether objects live in namespaces (scoping by namespace applies only then). */
  readonly namespaced: boolean;
  /** For owned kinds: the owner kinds this kind maps to. @default undefined (a primary kind) */
  readonly owners?: readonly OwnerKind[];
  /**
   * For referenced kinds: the primary kinds whose reconcilers declare a `references` entry for this
   * kind (their `referencedBy` functions, from the bridge's operator, map a changed object to its
   * referrers). @default undefined
   */
  readonly referrers?: readonly OwnerKind[];
  /**
   * List and watch metadata only (`PartialObjectMetadata`): the cache keeps no data, and a new
   * resourceVersion is the change. For owned and referenced kinds, which need nothing else. @default false
   */
  readonly metadataOnly?: boolean;
  /**
   * For owned kinds whose status matters (`statusChanges` in a plan's `owns`): objects are listed and
   * watched whole, the cache keeps only their metadata and `status`, and a change of `status` is a
   * change. Not combined with `metadataOnly`. @default false
   */
  readonly watchStatus?: boolean;
  /**
   * Only objects matching this label selector are watched, combined with the bridge's own selector:
   * for primary kinds a reconciler's `labelSelector`, for owned kinds homeostat's own label
   * (`ownedChildSelector`). @default every object
   */
  readonly labelSelector?: string;
  /** Label keys whose changes matter to the reconciler (signal on change). @default [] */
  readonly relevantLabels?: readonly string[];
  /** Annotation keys whose changes matter to the reconciler (signal on change). @default [] */
  readonly relevantAnnotations?: readonly string[];
}

/** An owner reference as found in `metadata.ownerReferences`. */
export interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller?: boolean;
}

/** The object metadata the bridge keeps (the cache drops managedFields and last-applied). */
export interface ObjectMeta {
  readonly name?: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly generation?: number;
  readonly deletionTimestamp?: string;
  readonly finalizers?: readonly string[];
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly ownerReferences?: readonly OwnerReference[];
  readonly [key: string]: unknown;
}

/** A Kubernetes object as the bridge sees it. */
export interface KubeObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: ObjectMeta;
  readonly status?: { readonly observedGeneration?: number; readonly [key: string]: unknown };
  readonly [key: string]: unknown;
}

/** Time, injectable so backoff, watchdogs and leases are tested without waiting. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Schedules `fn` after `ms`; returns a cancel function. */
  setTimeout(fn: () => void, ms: number): () => void;
}

/** The real clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  },
};

/** A source of uniform random numbers in [0, 1), injectable for tests. */
export type Random = () => number;

/** Resolves after `ms` on `clock`, or early (without error) when `signal` aborts. */
export function sleepOn(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const onAbort = (): void => {
      cancel();
      resolve();
    };
    const cancel = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Whether a watched resource is a primary kind (neither owned nor referenced): its objects get workflows. */
export function isPrimary(resource: WatchedResource): boolean {
  return !resource.owners && !resource.referrers;
}
