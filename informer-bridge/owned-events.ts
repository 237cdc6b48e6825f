/**
 * Owned objects' changes mapped to their owners (controller-runtime's `EnqueueRequestForOwner`): an
 * owner reference becomes a `child-changed` request only when it names an owner the bridge has cached
 * with that UID. A reference to an object that does not exist, to another object of that name, or to
 * an owner outside this bridge's shard is counted and ignored: a tenant's ConfigMap naming 200 Apps
 * that do not exist starts no workflow. While an owner kind is not listed yet, a child's event waits
 * for that list (one entry per child), so an owner listed after its children loses nothing.
 */
import type { ObjectRef, ReconcileReason, ReconcileRequest } from '../core/definitions';
import { workflowIdFor } from '../core/definitions';
import type { ObjectCache } from './cache';
import { objectKey } from './cache';
import { ownersOf, relevantChange } from './predicates';
import type { ReflectorEvent } from './reflector';
import { isPrimary, type KubeObject, type WatchedResource } from './types';

/** What {@link OwnedEvents} needs of the bridge. */
export interface OwnedEventsOptions {
  readonly resources: readonly WatchedResource[];
  /** The cache of a watched primary kind, and whether its first list completed. */
  readonly primaryCache: (
    group: string,
    kind: string,
  ) => { readonly synced: boolean; readonly cache: ObjectCache } | undefined;
  /** The request for a cached primary object. */
  readonly requestOf: (resource: WatchedResource, obj: KubeObject, reason: ReconcileReason) => ReconcileRequest;
  readonly enqueue: (request: ReconcileRequest) => void;
  /** An owner reference that named no cached owner with its UID (no request was made). */
  readonly onUnresolved: (resource: WatchedResource, child: KubeObject, owner: ObjectRef, uid: string) => void;
}

/** Maps owned objects' events to their cached owners. */
export class OwnedEvents {
  private readonly deferred = new Map<string, { resource: WatchedResource; event: ReflectorEvent }>();

  constructor(private readonly opts: OwnedEventsOptions) {}

  /** Events waiting for an owner kind's first list. */
  get waiting(): number {
    return this.deferred.size;
  }

  /** An owned object was added, modified or deleted (not a replay of the first list). */
  onEvent(resource: WatchedResource, event: ReflectorEvent): void {
    if (event.type === 'modified' && event.previous && !relevantChange(resource, event.previous, event.object)) return;
    if ((resource.owners ?? []).some((o) => this.opts.primaryCache(o.group, o.kind)?.synced === false)) {
      this.defer(resource, event);
      return;
    }
    const owners = ownersOf(resource, event.object);
    if (event.type === 'modified' && event.previous) owners.push(...ownersOf(resource, event.previous));
    const seen = new Set<string>();
    for (const owner of owners) {
      const primary = this.opts.resources.find(
        (r) => isPrimary(r) && r.group === owner.ref.group && r.kind === owner.ref.kind,
      );
      const ref: ObjectRef = { ...owner.ref, namespace: primary && !primary.namespaced ? '' : owner.ref.namespace };
      const id = workflowIdFor(ref);
      if (seen.has(id)) continue;
      seen.add(id);
      const cached = primary
        ? this.opts
            .primaryCache(primary.group, primary.kind)
            ?.cache.get(objectKey({ metadata: { name: ref.name, namespace: ref.namespace } }))
        : undefined;
      if (!primary || !cached || !owner.uid || cached.metadata.uid !== owner.uid) {
        this.opts.onUnresolved(resource, event.object, ref, owner.uid);
        continue;
      }
      this.opts.enqueue(this.opts.requestOf(primary, cached, 'child-changed'));
    }
  }

  /** A primary kind was listed: handles the events that waited for it (those still waiting wait on). */
  flush(): void {
    const waiting = [...this.deferred.values()];
    this.deferred.clear();
    for (const { resource, event } of waiting) this.onEvent(resource, event);
  }

  /** Keeps a child's event until its owner kinds are listed: its first `previous` and newest object. */
  private defer(resource: WatchedResource, event: ReflectorEvent): void {
    const key = `${resource.group}/${resource.kind}|${objectKey(event.object)}`;
    const earlier = this.deferred.get(key)?.event;
    const previous = earlier ? earlier.previous : event.previous;
    const type = earlier?.type === 'added' && event.type === 'modified' ? 'added' : event.type;
    this.deferred.set(key, {
      resource,
      event: { type, object: event.object, ...(previous ? { previous } : {}), replay: false },
    });
  }
}
