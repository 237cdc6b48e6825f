/**
 * Kubernetes access used by the activities: the reconciled object (a custom resource, namespaced or
 * cluster-scoped) through merge patches with resourceVersion preconditions, owned children through
 * server-side apply, and `events.k8s.io/v1` Events. Every client error leaves as a `HomeostatError`.
 */
import { createHash } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import type { ChildClient, ObjectIdentity } from '../core/reconciler';
import type { ReconcilerPlan } from '../core/plan';
import type { ObjectRef } from '../core/definitions';
import { fromKubernetesError, isNotFound } from '../core/errors';
import type { EventRecord } from '../core/activity-contract';

export type { EventRecord };

/** The finalizer homeostat adds to every object it reconciles (DESIGN.md). */
export const finalizerName = 'homeostat.dev/finalizer';

/** The field manager of homeostat's server-side applies. */
export const defaultFieldManager = 'homeostat';

/** A custom object as read from the API server. */
export interface CustomObject {
  apiVersion: string;
  kind: string;
  metadata: k8s.V1ObjectMeta;
  spec?: unknown;
  status?: Record<string, unknown>;
}

const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

// One generic client per KubeConfig: it caches API discovery, which would otherwise cost a request
// per apply, delete or Event.
const objectApis = new WeakMap<k8s.KubeConfig, k8s.KubernetesObjectApi>();
function objectApiFor(kc: k8s.KubeConfig): k8s.KubernetesObjectApi {
  let api = objectApis.get(kc);
  if (!api) {
    api = k8s.KubernetesObjectApi.makeApiClient(kc);
    objectApis.set(kc, api);
  }
  return api;
}

/** Reads and patches one reconciled object. */
export class PrimaryObjects {
  private readonly custom: k8s.CustomObjectsApi;

  constructor(kc: k8s.KubeConfig) {
    this.custom = kc.makeApiClient(k8s.CustomObjectsApi);
  }

  private coords(plan: ReconcilerPlan, ref: ObjectRef) {
    return { group: plan.group, version: plan.version, plural: plan.plural, name: ref.name };
  }

  /** The object, or `undefined` when it does not exist. */
  async get(plan: ReconcilerPlan, ref: ObjectRef): Promise<CustomObject | undefined> {
    try {
      const c = this.coords(plan, ref);
      const obj: unknown =
        plan.scope === 'Namespaced'
          ? await this.custom.getNamespacedCustomObject({ ...c, namespace: ref.namespace ?? '' })
          : await this.custom.getClusterCustomObject(c);
      return obj as CustomObject;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw fromKubernetesError(err, `get ${ref.kind} ${ref.namespace ?? ''}/${ref.name}`);
    }
  }

  /** A merge patch of the object (or its status subresource). 404 and 409 surface as HomeostatErrors. */
  async patch(plan: ReconcilerPlan, ref: ObjectRef, body: object, subresource?: 'status'): Promise<CustomObject> {
    try {
      const c = { ...this.coords(plan, ref), body };
      const ns = { ...c, namespace: ref.namespace ?? '' };
      let obj: unknown;
      if (plan.scope === 'Namespaced') {
        obj =
          subresource === 'status'
            ? await this.custom.patchNamespacedCustomObjectStatus(ns, mergePatch)
            : await this.custom.patchNamespacedCustomObject(ns, mergePatch);
      } else {
        obj =
          subresource === 'status'
            ? await this.custom.patchClusterCustomObjectStatus(c, mergePatch)
            : await this.custom.patchClusterCustomObject(c, mergePatch);
      }
      return obj as CustomObject;
    } catch (err) {
      throw fromKubernetesError(err, `patch ${subresource ?? ''} ${ref.kind} ${ref.namespace ?? ''}/${ref.name}`);
    }
  }
}

/** The identity a step sees, from the object as read. */
export function identityOf(obj: CustomObject): ObjectIdentity {
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    name: obj.metadata.name ?? '',
    ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}),
    uid: obj.metadata.uid ?? '',
    generation: obj.metadata.generation ?? 0,
    labels: obj.metadata.labels ?? {},
  };
}

/** A {@link ChildClient} for one owner: server-side apply with a field manager and an ownerReference. */
export function childClient(kc: k8s.KubeConfig, owner: ObjectIdentity, fieldManager: string): ChildClient {
  const objects = objectApiFor(kc);
  const withNamespace = <T extends Pick<k8s.KubernetesObject, 'metadata'>>(child: T): T => ({
    ...child,
    metadata: {
      ...child.metadata,
      ...(child.metadata?.namespace || !owner.namespace ? {} : { namespace: owner.namespace }),
    },
  });
  const describe = (child: Pick<k8s.KubernetesObject, 'kind' | 'metadata'>) =>
    `${child.kind ?? '?'} ${child.metadata?.namespace ?? owner.namespace ?? ''}/${child.metadata?.name ?? '?'}`;
  return {
    async apply<T extends k8s.KubernetesObject>(child: T): Promise<T> {
      const ownerReference: k8s.V1OwnerReference = {
        apiVersion: owner.apiVersion,
        kind: owner.kind,
        name: owner.name,
        uid: owner.uid,
        controller: true,
        blockOwnerDeletion: true,
      };
      const body = withNamespace({
        ...child,
        metadata: { ...child.metadata, ownerReferences: [ownerReference] },
      });
      // managedFields and resourceVersion must not be sent with an apply.
      delete body.metadata?.managedFields;
      delete body.metadata?.resourceVersion;
      try {
        return await objects.patch(body, undefined, undefined, fieldManager, true, k8s.PatchStrategy.ServerSideApply);
      } catch (err) {
        throw fromKubernetesError(err, `apply ${describe(child)}`);
      }
    },
    async delete(child) {
      try {
        await objects.delete(withNamespace(child), undefined, undefined, undefined, undefined, 'Background');
      } catch (err) {
        if (isNotFound(err)) return;
        throw fromKubernetesError(err, `delete ${describe(child)}`);
      }
    },
    async read<T extends k8s.KubernetesObject>(child: Pick<k8s.KubernetesObject, 'apiVersion' | 'kind' | 'metadata'>) {
      try {
        return await objects.read<T>(withNamespace(child) as Parameters<typeof objects.read<T>>[0]);
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw fromKubernetesError(err, `read ${describe(child)}`);
      }
    },
  };
}

/** RFC 3339 with microseconds, as `metav1.MicroTime` requires. */
export function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** Records an Event regarding the object; an Event that already exists (a retry) is success. */
export async function recordEvent(
  kc: k8s.KubeConfig,
  regarding: ObjectIdentity,
  event: EventRecord,
  reporting: { controller: string; instance: string },
): Promise<void> {
  const objects = objectApiFor(kc);
  const namespace = regarding.namespace ?? 'default';
  const hash = createHash('sha256').update(`${regarding.uid}/${event.dedupKey}`).digest('hex').slice(0, 12);
  const body = {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: `${regarding.name}.${hash}`, namespace },
    eventTime: microTime(new Date()),
    reportingController: reporting.controller,
    reportingInstance: reporting.instance,
    action: event.action,
    reason: event.reason,
    note: event.note.slice(0, 1024),
    type: event.type,
    regarding: {
      apiVersion: regarding.apiVersion,
      kind: regarding.kind,
      name: regarding.name,
      uid: regarding.uid,
      ...(regarding.namespace ? { namespace: regarding.namespace } : {}),
    },
  };
  try {
    await objects.create(body);
  } catch (err) {
    if (typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 409) return;
    throw fromKubernetesError(err, `record event ${event.reason}`);
  }
}

/**
 * Reads any object for a step (`StepContext.read`): a namespaced kind without a namespace is
 * read in the owner's namespace; a missing object is `undefined`.
 */
export async function readObject<T extends k8s.KubernetesObject>(
  kc: k8s.KubeConfig,
  owner: ObjectIdentity,
  object: Pick<k8s.KubernetesObject, 'apiVersion' | 'kind'> & { metadata: { name: string; namespace?: string } },
): Promise<T | undefined> {
  const objects = objectApiFor(kc);
  const namespace = object.metadata.namespace ?? owner.namespace;
  const spec = { ...object, metadata: { ...object.metadata, ...(namespace ? { namespace } : {}) } };
  try {
    return await objects.read<T>(spec);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw fromKubernetesError(err, `read ${object.kind} ${namespace ?? ''}/${object.metadata.name}`);
  }
}
