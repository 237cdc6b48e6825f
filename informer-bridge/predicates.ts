/**
 * Which watch events become signals (controller-runtime's predicates): a change of generation (the
 * spec), of deletionTimestamp, a finalizer removed (or any finalizer change while deleting), or a
 * change of a label or annotation the reconciler declared. Finalizers added to a live object — homeostat's
 * own, on an object's first pass — are ignored.
 * Status-only updates — including homeostat's own status writes — and resourceVersion-only churn are
 * ignored, except on owned kinds whose status an owner asked for (`watchStatus`: a Deployment's rollout). Kinds without `metadata.generation` (ConfigMap, Secret) change when anything outside
 * `metadata` and `status` changes, or, watched as metadata only, when their resourceVersion does. Owned children map to their owners through ownerReferences.
 */
import type { ObjectRef } from '../core/definitions';
import { statusAnnotations } from '../core/status';
import type { KubeObject, OwnerReference, WatchedResource } from './types';

function sameList(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

function sameKeys(
  keys: readonly string[] | undefined,
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
): boolean {
  return (keys ?? []).every((k) => a?.[k] === b?.[k]);
}

/** The object without metadata and status: what defines a generation-less kind's desired state. */
function content(obj: KubeObject): string {
  const { metadata: _metadata, status: _status, ...rest } = obj;
  return JSON.stringify(rest);
}

function ownerRefsKey(obj: KubeObject): string {
  return (obj.metadata.ownerReferences ?? []).map((o) => `${o.apiVersion}/${o.kind}/${o.name}/${o.uid}`).join(',');
}

/**
 * Whether the update only added finalizers to a live object — what homeostat's own first pass does
 * (it adds its finalizer before acting). Signalling that would run a second, redundant pass for every
 * new object; a removed finalizer or any change while deleting still signals.
 */
function onlyAddedFinalizers(before: KubeObject, after: KubeObject): boolean {
  if (after.metadata.deletionTimestamp) return false;
  const was = before.metadata.finalizers ?? [];
  const now = new Set(after.metadata.finalizers ?? []);
  return was.every((f) => now.has(f)) && now.size > was.length;
}

/**
 * Whether an update from `before` to `after` matters to a reconciler of `resource`.
 * @returns the first rule that matched (for logs and tests), or `undefined` when the update is ignored
 */
export function relevantChange(resource: WatchedResource, before: KubeObject, after: KubeObject): string | undefined {
  const a = before.metadata;
  const b = after.metadata;
  if (a.uid !== b.uid) return 'uid';
  if (a.generation !== undefined || b.generation !== undefined) {
    if (a.generation !== b.generation) return 'generation';
  } else if (resource.metadataOnly) {
    // No content to compare (PartialObjectMetadata): a new resourceVersion is the change.
    if (a.resourceVersion !== b.resourceVersion) return 'resourceVersion';
  } else if (content(before) !== content(after)) {
    return 'content';
  }
  if (resource.watchStatus && JSON.stringify(before.status ?? null) !== JSON.stringify(after.status ?? null)) {
    return 'status';
  }
  if (a.deletionTimestamp !== b.deletionTimestamp) return 'deletionTimestamp';
  if (!sameList(a.finalizers, b.finalizers) && !onlyAddedFinalizers(before, after)) return 'finalizers';
  if (!sameKeys(resource.relevantLabels, a.labels, b.labels)) return 'labels';
  if (!sameKeys(resource.relevantAnnotations, a.annotations, b.annotations)) return 'annotations';
  if (resource.owners && ownerRefsKey(before) !== ownerRefsKey(after)) return 'ownerReferences';
  return undefined;
}

/** Splits `apiVersion` (`apps/v1`, `v1`) into group and version. */
export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** An owner of a child, as a reference plus the UID the child names. */
export interface OwnerTarget {
  readonly ref: ObjectRef;
  readonly uid: string;
}

/**
 * The owners of `obj` that `resource` maps to: ownerReferences whose group and kind are among
 * `resource.owners`, the controller reference first. Owners live in the child's namespace
 * (Kubernetes forbids cross-namespace owners) or are cluster-scoped.
 */
export function ownersOf(resource: WatchedResource, obj: KubeObject): OwnerTarget[] {
  if (!resource.owners?.length) return [];
  const refs: OwnerReference[] = [...(obj.metadata.ownerReferences ?? [])].sort(
    (x, y) => Number(y.controller ?? false) - Number(x.controller ?? false),
  );
  const out: OwnerTarget[] = [];
  for (const o of refs) {
    const { group, version } = parseApiVersion(o.apiVersion);
    if (!resource.owners.some((k) => k.group === group && k.kind === o.kind)) continue;
    out.push({
      ref: { group, version, kind: o.kind, namespace: obj.metadata.namespace ?? '', name: o.name },
      uid: o.uid,
    });
  }
  return out;
}

/**
 * Whether a primary object is behind: its spec generation is not yet observed in
 * `status.observedGeneration` (or, on kinds homeostat reports through annotations, in the
 * `homeostat.dev/observed-generation` annotation), or it is being deleted (finalizers pending). Used by
 * the safety net.
 */
export function isBehind(obj: KubeObject): boolean {
  if (obj.metadata.deletionTimestamp) return true;
  const generation = obj.metadata.generation;
  if (generation === undefined) return false;
  const annotated = obj.metadata.annotations?.[statusAnnotations.observedGeneration];
  const observed = annotated !== undefined ? Number(annotated) : obj.status?.observedGeneration;
  return observed !== generation;
}
