/**
 * What the bridge's cache keeps of an object (client-go's `SetTransform`, controller-runtime's
 * metadata-only cache with `DefaultTransform`): applied to every listed or watched object before it
 * is held, so that what a tenant writes into an object it controls (a 200 KB annotation, thousands of
 * labels or ownerReferences) never reaches the cache. A primary object keeps what its reconciler's
 * `referencedBy` and the predicates read (spec, labels, status, the annotations homeostat reads); an
 * owned or referenced object keeps only its identity, its resourceVersion and generation, its
 * deletion, finalizers, the ownerReferences to owner kinds, the labels and annotations declared
 * relevant and, for `watchStatus` kinds, its status.
 */
import { createHash } from 'node:crypto';
import { statusAnnotations } from '../core/status';
import { trimObject } from './cache';
import { parseApiVersion } from './predicates';
import { isPrimary, type KubeObject, type ObjectMeta, type OwnerReference, type WatchedResource } from './types';

/** Turns a listed or watched object into what the cache holds. */
export type CacheTransform = (obj: KubeObject) => KubeObject;

/**
 * The ownerReferences to owner kinds an owned object keeps, the controller reference first; the rest
 * are ignored (homeostat sets one controller reference on what it creates).
 */
export const maxOwnerReferencesKept = 8;

/**
 * Finalizers an owned or referenced object keeps as they are; a longer list is kept as one digest
 * (`sha256:…`): any change of it still changes the object, and its size is bounded.
 */
export const maxFinalizersKept = 8;

/** The key under which a kind without generations keeps a digest of its content (data, spec …). */
export const contentDigestKey = 'homeostatContentSha256';

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

/** Only `keys` of `record`, or `undefined` when none is present. */
function pick(
  record: Readonly<Record<string, string>> | undefined,
  keys: readonly string[],
): Record<string, string> | undefined {
  if (!record) return undefined;
  const kept = Object.fromEntries(keys.filter((k) => typeof record[k] === 'string').map((k) => [k, record[k]!]));
  return Object.keys(kept).length ? kept : undefined;
}

function ownerReferencesKept(
  resource: WatchedResource,
  refs: readonly OwnerReference[] | undefined,
): OwnerReference[] | undefined {
  if (!resource.owners?.length || !refs) return undefined;
  const kept: OwnerReference[] = [];
  const sorted = [...refs].sort((x, y) => Number(y?.controller === true) - Number(x?.controller === true));
  for (const o of sorted) {
    if (kept.length >= maxOwnerReferencesKept) break;
    if (typeof o?.apiVersion !== 'string' || typeof o.kind !== 'string') continue;
    const { group } = parseApiVersion(o.apiVersion);
    if (!resource.owners.some((k) => k.group === group && k.kind === o.kind)) continue;
    kept.push({
      apiVersion: o.apiVersion,
      kind: o.kind,
      name: o.name,
      uid: o.uid,
      ...(o.controller === true ? { controller: true } : {}),
    });
  }
  return kept.length ? kept : undefined;
}

function finalizersKept(finalizers: readonly string[] | undefined): readonly string[] | undefined {
  if (!finalizers?.length) return undefined;
  if (finalizers.length <= maxFinalizersKept) return finalizers;
  return [`sha256:${sha256(JSON.stringify(finalizers))}`];
}

/** Drops `undefined` values (the cache's objects carry no empty keys). */
function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** The part of an owned or referenced object the bridge uses (see the module doc). */
export function stripDependent(resource: WatchedResource, obj: KubeObject): KubeObject {
  const m = obj.metadata;
  const metadata: ObjectMeta = defined({
    name: m.name,
    namespace: m.namespace,
    uid: m.uid,
    resourceVersion: m.resourceVersion,
    generation: m.generation,
    deletionTimestamp: m.deletionTimestamp,
    finalizers: finalizersKept(m.finalizers),
    labels: pick(m.labels, resource.relevantLabels ?? []),
    annotations: pick(m.annotations, resource.relevantAnnotations ?? []),
    ownerReferences: ownerReferencesKept(resource, m.ownerReferences),
  });
  const { apiVersion, kind, metadata: _metadata, status, ...content } = obj;
  // A kind listed whole without generations changes when its content does: a digest keeps that.
  const digest =
    !resource.metadataOnly && !resource.watchStatus && Object.keys(content).length
      ? { [contentDigestKey]: sha256(JSON.stringify(content)) }
      : {};
  return defined({
    apiVersion,
    kind,
    metadata,
    ...(resource.watchStatus ? { status } : {}),
    ...digest,
  });
}

/**
 * A primary object without managedFields and without annotations homeostat does not read (a
 * reconciler's `referencedBy` sees no annotations): kept are the observed-generation annotation (kinds
 * reported through annotations) and the resource's `relevantAnnotations`.
 */
export function stripPrimary(resource: WatchedResource, obj: KubeObject): KubeObject {
  const trimmed = trimObject(obj);
  const { annotations, ...metadata } = trimmed.metadata;
  const kept = pick(annotations, [statusAnnotations.observedGeneration, ...(resource.relevantAnnotations ?? [])]);
  return { ...trimmed, metadata: kept ? { ...metadata, annotations: kept } : metadata };
}

/** The transform of a watched resource's cache: {@link stripPrimary} or {@link stripDependent}. */
export function cacheTransformFor(resource: WatchedResource): CacheTransform {
  return isPrimary(resource) ? (obj) => stripPrimary(resource, obj) : (obj) => stripDependent(resource, obj);
}
