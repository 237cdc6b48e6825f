/**
 * Kubernetes access used by the activities: the reconciled object (a custom resource or a core kind
 * such as `Namespace`, namespaced or cluster-scoped) through merge patches with resourceVersion
 * preconditions, and any object a step reads. URLs of kinds other than the primary's come from API
 * discovery (the client's cached resource lists), shared with `children.ts` and `events.ts`. Every
 * client error leaves as a `HomeostatError`.
 */
import * as k8s from '@kubernetes/client-node';
import type { ObjectIdentity, ReadDeclaration } from '../core/reconciler';
import { groupOfApiVersion, readRefusal } from '../core/read-scope';
import type { ReconcilerPlan } from '../core/plan';
import type { ObjectRef } from '../core/definitions';
import { fromKubernetesError, HomeostatError, isNotFound } from '../core/errors';

/** The finalizer homeostat adds to the objects of a plan with cleanup steps (docs/architecture.md, "Deletion"). */
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

/** The generic client, with the scope of a kind from its cached discovery (the client keeps it protected). */
export class ObjectApi extends k8s.KubernetesObjectApi {
  /** Whether `kind` is namespaced; throws when the API server does not serve it. */
  async isNamespaced(apiVersion: string, kind: string): Promise<boolean> {
    const resource = await this.resource(apiVersion, kind);
    if (!resource) {
      throw new HomeostatError('ERR_STEP_TERMINAL', `the API server serves no kind ${kind} in ${apiVersion}`);
    }
    return resource.namespaced;
  }
}

// One generic client per KubeConfig: it caches API discovery, which would otherwise cost a request
// per apply, delete or Event.
const objectApis = new WeakMap<k8s.KubeConfig, ObjectApi>();
export function objectApiFor(kc: k8s.KubeConfig): ObjectApi {
  let api = objectApis.get(kc);
  if (!api) {
    api = kc.makeApiClient(ObjectApi);
    objectApis.set(kc, api);
  }
  return api;
}

/**
 * Where homeostat reports an object's status: its status subresource (kinds homeostat defines, whose
 * CRD it generates), or annotations on the object (kinds it does not define, such as `Namespace`,
 * whose `status` belongs to Kubernetes or to another controller).
 */
export type StatusLocation = 'subresource' | 'annotations';

/** Where a reconciler's status goes: annotations when it generates no CRD (`crd: false`) or reconciles a core kind. */
export function statusLocationOf(reconciler: { plan: Pick<ReconcilerPlan, 'group'>; crd?: unknown }): StatusLocation {
  return reconciler.crd === false || reconciler.plan.group === '' ? 'annotations' : 'subresource';
}

/** Reads and patches one reconciled object. */
export class PrimaryObjects {
  private readonly custom: k8s.CustomObjectsApi;
  private readonly objects: ObjectApi;

  constructor(kc: k8s.KubeConfig) {
    this.custom = kc.makeApiClient(k8s.CustomObjectsApi);
    this.objects = objectApiFor(kc);
  }

  private coords(plan: ReconcilerPlan, ref: ObjectRef) {
    return { group: plan.group, version: plan.version, plural: plan.plural, name: ref.name };
  }

  /** The object's header for the generic client (core kinds: `/api/v1/...` has no group to name). */
  private header(plan: ReconcilerPlan, ref: ObjectRef) {
    return {
      apiVersion: plan.version,
      kind: plan.kind,
      metadata: { name: ref.name, ...(plan.scope === 'Namespaced' ? { namespace: ref.namespace ?? '' } : {}) },
    };
  }

  /** The object, or `undefined` when it does not exist. */
  async get(plan: ReconcilerPlan, ref: ObjectRef): Promise<CustomObject | undefined> {
    try {
      if (plan.group === '') return (await this.objects.read(this.header(plan, ref))) as unknown as CustomObject;
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

  /**
   * A merge patch of the object (or its status subresource; not for core kinds). 404 and 409 surface
   * as HomeostatErrors.
   */
  async patch(
    plan: ReconcilerPlan,
    ref: ObjectRef,
    body: { metadata?: object; status?: object },
    subresource?: 'status',
  ): Promise<CustomObject> {
    try {
      if (plan.group === '') {
        if (subresource) throw new HomeostatError('ERR_STEP_TERMINAL', `core kind ${plan.kind}: no status to write`);
        const header = this.header(plan, ref);
        const obj = await this.objects.patch(
          { ...header, ...body, metadata: { ...header.metadata, ...body.metadata } },
          undefined,
          undefined,
          undefined,
          undefined,
          k8s.PatchStrategy.MergePatch,
        );
        return obj as unknown as CustomObject;
      }
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

/**
 * Where an object named by a step lives: its own `metadata.namespace`, else the owner's namespace for
 * a namespaced kind. A namespaced kind named without a namespace by a cluster-scoped owner is a
 * mistake in the step (the client would silently pick `default`): it fails, terminally.
 */
export async function placed<T extends Pick<k8s.KubernetesObject, 'apiVersion' | 'kind' | 'metadata'>>(
  objects: ObjectApi,
  owner: ObjectIdentity,
  object: T,
  what: string,
): Promise<T> {
  if (object.metadata?.namespace) return object;
  if (owner.namespace) return { ...object, metadata: { ...object.metadata, namespace: owner.namespace } };
  if (await objects.isNamespaced(object.apiVersion ?? '', object.kind ?? '')) {
    throw new HomeostatError(
      'ERR_STEP_TERMINAL',
      `${what} ${object.kind ?? '?'} ${object.metadata?.name ?? '?'}: a namespaced kind needs metadata.namespace ` +
        `when the reconciled object (${owner.kind} ${owner.name}) is cluster-scoped`,
    );
  }
  return object;
}

/**
 * Reads an object for a step (`StepContext.read`): a namespaced kind without a namespace is read in the
 * owner's namespace (a cluster-scoped owner must name it); a missing object is `undefined`. Confined
 * like writes ({@link readRefusal}): a read outside the owner's namespace that `reads` does not declare
 * fails terminally before any request for the object (only the kind's cached discovery is consulted).
 */
export async function readObject<T extends k8s.KubernetesObject>(
  kc: k8s.KubeConfig,
  owner: ObjectIdentity,
  reads: readonly ReadDeclaration[],
  object: Pick<k8s.KubernetesObject, 'apiVersion' | 'kind'> & { metadata: { name: string; namespace?: string } },
): Promise<T | undefined> {
  const objects = objectApiFor(kc);
  const namespace = object.metadata.namespace ?? owner.namespace;
  const what = `read ${object.kind} ${namespace ? `${namespace}/` : ''}${object.metadata.name}`;
  try {
    const spec = await placed(objects, owner, object, 'read');
    const apiVersion = object.apiVersion ?? '';
    const kind = object.kind ?? '';
    const namespaced = await objects.isNamespaced(apiVersion, kind);
    const refusal = readRefusal(owner.namespace, reads, {
      group: groupOfApiVersion(apiVersion),
      kind,
      namespaced,
      ...(namespaced && spec.metadata.namespace ? { namespace: spec.metadata.namespace } : {}),
      name: object.metadata.name,
    });
    if (refusal !== undefined) {
      const ownerName = `${owner.kind} ${owner.namespace ? `${owner.namespace}/` : ''}${owner.name}`;
      throw new HomeostatError('ERR_STEP_TERMINAL', `${what} refused for ${ownerName}: ${refusal}`);
    }
    return await objects.read<T>(spec);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw fromKubernetesError(err, what);
  }
}
