/**
 * What the informer bridge must watch for an operator: each reconciled (primary) kind, each kind its
 * reconcilers own (mapped back to the owners through ownerReferences, `child-changed`) and each kind
 * they reference (mapped back through their `referencedBy` functions, `referenced-changed`). Plurals
 * and scopes come from API discovery, never from string rules: a primary's plan names its plural and
 * scope (its CRD is generated from the plan) and discovery must agree; owned and referenced kinds are
 * looked up. A kind the API server does not serve fails the bridge's start with its name.
 */
import type * as k8s from '@kubernetes/client-node';
import { driftCheckAnnotation } from '../core/plan';
import { ownedChildSelector } from '../core/labels';
import type { Reconciler } from '../core/reconciler';
import { ApiDiscovery, type DiscoveredResource, DiscoveryError, type ResourceMapper } from './discovery';
import type { OwnerKind, WatchedResource } from './types';

/**
 * The part of an operator that decides what is watched: each reconciler's plan, label selector and
 * references. An `Operator` is one.
 */
export interface WatchSource {
  readonly reconcilers: readonly Pick<Reconciler<any>, 'plan' | 'labelSelector' | 'references'>[]; // eslint-disable-line @typescript-eslint/no-explicit-any
}

const apiVersionOf = (group: string, version: string): string => (group ? `${group}/${version}` : version);

interface Entry {
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
  owners: OwnerKind[];
  referrers: OwnerKind[];
  /** Whether an owner asked for the kind's status changes (`statusChanges`). */
  watchStatus: boolean;
}

function addKind(list: OwnerKind[], kind: OwnerKind): void {
  if (!list.some((o) => o.group === kind.group && o.kind === kind.kind)) list.push(kind);
}

/**
 * The resources to watch for an operator, resolved through `discovery` (an {@link ApiDiscovery} of the
 * cluster, or the cluster's kubeconfig). Owned kinds shared by several reconcilers are watched once,
 * with every owner kind listed, as metadata only and by `ownedChildSelector` (core/labels.ts); a kind referenced
 * (whether owned too or not) is watched once, unfiltered, as metadata only. The bridge holds no Secret
 * data and nothing of objects homeostat neither created nor references.
 * @throws DiscoveryError naming every kind the API server does not serve, or a primary whose plan's
 *   plural or scope disagrees with the server
 */
export async function watchedResourcesFor(
  operator: WatchSource,
  discovery: ResourceMapper | k8s.KubeConfig,
): Promise<WatchedResource[]> {
  const mapper: ResourceMapper = 'resourceFor' in discovery ? discovery : new ApiDiscovery(discovery);
  const problems: string[] = [];
  const resolve = async (apiVersion: string, kind: string, role: string): Promise<DiscoveredResource | undefined> => {
    try {
      return await mapper.resourceFor(apiVersion, kind);
    } catch (err) {
      problems.push(`${role} ${kind} (${apiVersion}): ${(err as Error).message}`);
      return undefined;
    }
  };

  const primaries: WatchedResource[] = [];
  const others = new Map<string, Entry>();
  for (const { plan, labelSelector, references } of operator.reconcilers) {
    const primary: OwnerKind = { group: plan.group, kind: plan.kind };
    const served = await resolve(apiVersionOf(plan.group, plan.version), plan.kind, 'reconciled kind');
    if (served && (served.plural !== plan.plural || served.namespaced !== (plan.scope === 'Namespaced'))) {
      problems.push(
        `reconciled kind ${plan.kind} (${apiVersionOf(plan.group, plan.version)}): the plan says plural ` +
          `${plan.plural}, scope ${plan.scope}; the API server serves ${served.plural}, scope ` +
          `${served.namespaced ? 'Namespaced' : 'Cluster'} (regenerate and apply the CRD, or fix the plan)`,
      );
    }
    primaries.push({
      group: plan.group,
      version: plan.version,
      plural: plan.plural,
      kind: plan.kind,
      namespaced: plan.scope === 'Namespaced',
      ...(labelSelector ? { labelSelector } : {}),
      // A changed drift-check interval takes effect at once: the pass it signals re-arms the timer.
      ...(plan.driftCheckInterval !== undefined ? { relevantAnnotations: [driftCheckAnnotation] } : {}),
    });
    const related = [
      ...(plan.owns ?? []).map((k) => ({ ...k, role: 'owned' as const })),
      ...(references ?? []).map((k) => ({ apiVersion: k.apiVersion, kind: k.kind, role: 'referenced' as const })),
    ];
    for (const { apiVersion, kind, role, ...rest } of related) {
      const found = await resolve(apiVersion, kind, `${role} kind`);
      if (!found) continue;
      const key = `${found.group}/${found.kind}`;
      const entry = others.get(key) ?? {
        group: found.group,
        version: found.version,
        plural: found.plural,
        kind: found.kind,
        namespaced: found.namespaced,
        owners: [],
        referrers: [],
        watchStatus: false,
      };
      addKind(role === 'owned' ? entry.owners : entry.referrers, primary);
      if ('statusChanges' in rest && rest.statusChanges === true) entry.watchStatus = true;
      others.set(key, entry);
    }
  }
  if (problems.length > 0) {
    throw new DiscoveryError(`cannot watch the operator's kinds:\n  ${problems.join('\n  ')}`);
  }
  const related: WatchedResource[] = [...others.values()].map(({ owners, referrers, watchStatus, ...r }) => ({
    ...r,
    ...(owners.length > 0 ? { owners } : {}),
    ...(referrers.length > 0 ? { referrers } : {}),
    // The bridge needs no owned or referenced object's data: only owners, generations and
    // resourceVersions (for kinds without generations a new resourceVersion is the change). Owned-only
    // kinds are also listed by homeostat's label, so the cluster's other Secrets, ConfigMaps,
    // Deployments and Services are never listed, watched or cached. A kind referenced too (a server
    // Secret, which homeostat did not create) is watched unfiltered, as metadata.
    // A kind whose status an owner asked for (a Deployment's rollout) is watched whole, and the
    // reflector keeps only its metadata and status.
    ...(watchStatus ? { watchStatus: true } : { metadataOnly: true }),
    ...(referrers.length === 0 ? { labelSelector: ownedChildSelector } : {}),
  }));
  return [...primaries, ...related];
}
