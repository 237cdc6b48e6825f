/**
 * What the informer bridge must watch for a set of reconcilers: each reconciled resource, and each
 * kind its reconciler owns, mapped back to its owners through ownerReferences (`child-changed`).
 */
import type { ReconcilerPlan } from '../core/plan';
import type { WatchedResource } from './types';

/** Kubernetes' own plural of a kind (`Ingress` → `ingresses`, `NetworkPolicy` → `networkpolicies`). */
export function pluralOf(kind: string): string {
  const k = kind.toLowerCase();
  if (/(s|x|z|ch|sh)$/.test(k)) return `${k}es`;
  if (/[^aeiou]y$/.test(k)) return `${k.slice(0, -1)}ies`;
  return `${k}s`;
}

const splitApiVersion = (apiVersion: string): { group: string; version: string } => {
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
};

/**
 * The resources to watch for these plans. Owned kinds shared by several reconcilers are watched once,
 * with every owner kind listed.
 */
export function watchedResourcesFor(plans: readonly ReconcilerPlan[]): WatchedResource[] {
  const resources: WatchedResource[] = plans.map((p) => ({
    group: p.group,
    version: p.version,
    plural: p.plural,
    kind: p.kind,
    namespaced: p.scope === 'Namespaced',
  }));
  const owned = new Map<string, WatchedResource & { owners: { group: string; kind: string }[] }>();
  for (const plan of plans) {
    for (const child of plan.owns ?? []) {
      const { group, version } = splitApiVersion(child.apiVersion);
      const key = `${group}/${child.kind}`;
      const entry = owned.get(key) ?? {
        group,
        version,
        plural: pluralOf(child.kind),
        kind: child.kind,
        namespaced: true,
        owners: [],
      };
      if (!entry.owners.some((o) => o.group === plan.group && o.kind === plan.kind))
        entry.owners.push({ group: plan.group, kind: plan.kind });
      owned.set(key, entry);
    }
  }
  return [...resources, ...owned.values()];
}
