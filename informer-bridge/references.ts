/**
 * Referenced objects (controller-runtime's `Watches(&Secret{}, EnqueueRequestsFromMapFunc(...))` with
 * a field index): each reconciler's `references` map a primary object to the objects it reads but does
 * not own. The bridge runs those map functions over its cache of primaries whenever a primary changes
 * and keeps the inverse, so that a changed Secret finds the objects that refer to it without scanning
 * every primary.
 */
import type { ReferencedName, ReferenceWatch } from '../core/reconciler';
import { parseApiVersion } from './predicates';
import type { KubeObject, WatchedResource } from './types';

/** The index key of a referenced object: group, kind, namespace (`''` when cluster-scoped) and name. */
export function referenceKey(group: string, kind: string, namespace: string, name: string): string {
  return `${group}/${kind}/${namespace}/${name}`;
}

/** One `references` entry of a primary kind, resolved to the watched resource that serves it. */
export interface ReferenceMapping {
  /** The referenced kind as watched (its `namespaced` decides how names are read). */
  readonly resource: WatchedResource;
  readonly referencedBy: ReferenceWatch['referencedBy'];
}

/** The most objects one primary object may refer to; the rest are ignored (and logged). */
export const maxReferencesPerObject = 1000;

/**
 * The index keys of the objects `primary` refers to through `mappings`. A map function that throws,
 * or returns something that is not a list of names, contributes nothing (its error is reported
 * through `onError`): it runs on objects whose spec nobody validated yet.
 */
export function referencedKeys(
  primary: KubeObject,
  primaryNamespaced: boolean,
  mappings: readonly ReferenceMapping[],
  onError: (err: unknown, resource: WatchedResource) => void,
): string[] {
  const keys = new Set<string>();
  const ownNamespace = primaryNamespaced ? (primary.metadata.namespace ?? '') : '';
  for (const { resource, referencedBy } of mappings) {
    let names: readonly ReferencedName[];
    try {
      const out: unknown = referencedBy(primary);
      if (!Array.isArray(out)) throw new TypeError(`referencedBy returned ${typeof out}, not a list of names`);
      names = out as readonly ReferencedName[];
    } catch (err) {
      onError(err, resource);
      continue;
    }
    for (const n of names) {
      if (keys.size >= maxReferencesPerObject) {
        onError(
          new RangeError(`more than ${maxReferencesPerObject} referenced objects; the rest are ignored`),
          resource,
        );
        return [...keys];
      }
      if (typeof n?.name !== 'string' || n.name === '') continue;
      const namespace = resource.namespaced ? (typeof n.namespace === 'string' && n.namespace) || ownNamespace : '';
      keys.add(referenceKey(resource.group, resource.kind, namespace, n.name));
    }
  }
  return [...keys];
}

/**
 * The inverse of the references of cached primary objects: which primaries (by an opaque key, with a
 * payload to find them again) refer to a referenced object.
 */
export class ReferenceIndex<P> {
  private readonly forward = new Map<string, { targets: readonly string[]; payload: P }>();
  private readonly inverse = new Map<string, Set<string>>();

  /** Primary objects with at least one reference. */
  get size(): number {
    return this.forward.size;
  }

  /** Replaces what `primary` refers to. */
  set(primary: string, targets: readonly string[], payload: P): void {
    this.delete(primary);
    if (targets.length === 0) return;
    this.forward.set(primary, { targets, payload });
    for (const t of targets) {
      let referrers = this.inverse.get(t);
      if (!referrers) this.inverse.set(t, (referrers = new Set()));
      referrers.add(primary);
    }
  }

  /** Forgets `primary` (deleted from the cache). */
  delete(primary: string): void {
    const entry = this.forward.get(primary);
    if (!entry) return;
    this.forward.delete(primary);
    for (const t of entry.targets) {
      const referrers = this.inverse.get(t);
      referrers?.delete(primary);
      if (referrers?.size === 0) this.inverse.delete(t);
    }
  }

  /** The payloads of the primaries that refer to `target`. */
  referrersOf(target: string): P[] {
    return [...(this.inverse.get(target) ?? [])].map((k) => this.forward.get(k)!.payload);
  }
}

/**
 * The `referencedBy` functions a referenced resource maps through, by primary kind, taken from the
 * reconcilers. Throws when a referrer named by the resource has no matching `references` entry (a
 * hand-written HOMEOSTAT_BRIDGE_RESOURCES that the operator does not back).
 */
export function referenceMappings(
  resources: readonly WatchedResource[],
  reconcilers: readonly {
    readonly plan: { group: string; kind: string };
    readonly references?: readonly ReferenceWatch[];
  }[],
): Map<string, ReferenceMapping[]> {
  const byPrimary = new Map<string, ReferenceMapping[]>();
  for (const resource of resources) {
    for (const referrer of resource.referrers ?? []) {
      const reconciler = reconcilers.find((r) => r.plan.group === referrer.group && r.plan.kind === referrer.kind);
      const watch = reconciler?.references?.find(
        (w) => w.kind === resource.kind && parseApiVersion(w.apiVersion).group === resource.group,
      );
      if (!watch) {
        throw new Error(
          `watched resource ${resource.kind} names referrer ${referrer.kind}.${referrer.group || 'core'}, ` +
            `but the operator has no reconciler of that kind referencing ${resource.kind}`,
        );
      }
      const key = `${referrer.group}/${referrer.kind}`;
      const list = byPrimary.get(key) ?? [];
      list.push({ resource, referencedBy: watch.referencedBy });
      byPrimary.set(key, list);
    }
  }
  return byPrimary;
}
