/**
 * Kubernetes access used by the activities: the reconciled object (a custom resource or a core kind
 * such as `Namespace`, namespaced or cluster-scoped) through merge patches with resourceVersion
 * preconditions, owned children (created, then server-side applied, only when this owner controls them), and `events.k8s.io/v1` Events. URLs of
 * kinds other than the primary's come from API discovery (the client's cached resource lists). Every
 * client error leaves as a `HomeostatError`.
 */
import { createHash } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import type { ChildClient, ObjectIdentity } from '../core/reconciler';
import type { ReconcilerPlan } from '../core/plan';
import type { ObjectRef } from '../core/definitions';
import {
  adoptionRefused,
  fromKubernetesError,
  HomeostatError,
  isConflict,
  isInvalid,
  isNotFound,
} from '../core/errors';
import type { EventRecord } from '../core/activity-contract';
import { statusAnnotations } from '../core/status';

export type { EventRecord };
export { statusAnnotations };

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
class ObjectApi extends k8s.KubernetesObjectApi {
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
function objectApiFor(kc: k8s.KubeConfig): ObjectApi {
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
async function placed<T extends Pick<k8s.KubernetesObject, 'apiVersion' | 'kind' | 'metadata'>>(
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
 * The labels homeostat puts on every child it creates: who manages it and which object owns it. The
 * bridge watches owned kinds by {@link managedByLabel} only, so it never lists the cluster's other
 * Secrets or ConfigMaps. Labels are forgeable by whoever can write the object: they select what the
 * bridge caches, never what homeostat may change — the controller ownerReference's UID decides that.
 * `informer-bridge/operator-resources.ts` holds the same selector (the bridge may not import this folder).
 */
export const childLabels = {
  managedBy: 'app.kubernetes.io/managed-by',
  ownerUid: 'homeostat.dev/owner-uid',
} as const;

/** The value of {@link childLabels}`.managedBy` on homeostat's children. */
export const managedByValue = 'homeostat';

/** The controller ownerReference of `obj`, if any. */
function controllerOf(obj: k8s.KubernetesObject): k8s.V1OwnerReference | undefined {
  return (obj.metadata?.ownerReferences ?? []).find((o) => o.controller === true);
}

/**
 * The JSON merge patch that puts a controlled child's content back as `desired` has it: every field
 * but `metadata` (labels, annotations and owner references other managers added stay), with the
 * resourceVersion read as its precondition. Lists are replaced whole, maps merged.
 */
function replacementOf<T extends k8s.KubernetesObject>(desired: T): T {
  const { metadata, ...content } = desired;
  return {
    ...content,
    metadata: {
      name: metadata?.name,
      ...(metadata?.namespace ? { namespace: metadata.namespace } : {}),
      resourceVersion: metadata?.resourceVersion,
    },
  } as T;
}

/** How many times an apply re-reads a child that changed between its ownership check and its write. */
const childConflictRetries = 5;

/**
 * A {@link ChildClient} for one owner. homeostat changes only children it controls:
 * - absent: created with `POST` (create-only: if someone creates the name first, 409 AlreadyExists and
 *   the ownership check below runs on theirs), carrying {@link childLabels} and the owner's controller
 *   ownerReference;
 * - present and controlled by this owner (an ownerReference with `controller: true` and the owner's
 *   UID): server-side apply with `force` (homeostat's fields are put back: self-healing) and the
 *   resourceVersion just read as a precondition, so a child replaced or re-owned between the check and
 *   the write fails with 409 and is checked again;
 * - present and not controlled by this owner, whatever its labels say: refused with
 *   `adoptionRefused` naming it (controller-runtime's `SetControllerReference` refusal), untouched.
 * Server-side apply without `force` would not protect an unowned object: list-map fields (a Service's
 * ports, ownerReferences) merge by key, so an apply adds to them without any conflict.
 * After a create, homeostat's `Update` entry in managedFields is dropped (once), so later applies own
 * exactly the fields they send and a field removed from the desired state is removed from the child.
 * An apply refused with 422 on a controlled child (another manager's list entry clashing with
 * homeostat's, such as a Service port renumbered by hand under the same name) is put back once with a
 * JSON merge patch of the desired content and applied again.
 *
 * A namespaced child defaults to the owner's namespace, and a namespaced owner's children must live in
 * its namespace (Kubernetes' garbage collector ignores cross-namespace owners); a cluster-scoped owner
 * (a `Namespace`, a cluster-scoped CRD) may own cluster-scoped children and namespaced children in any
 * namespace, named explicitly. A namespaced owner cannot own a cluster-scoped child: that apply fails
 * terminally. Deleting a child that this owner does not control leaves it alone.
 */
export function childClient(kc: k8s.KubeConfig, owner: ObjectIdentity, fieldManager: string): ChildClient {
  const objects = objectApiFor(kc);
  const describe = (child: Pick<k8s.KubernetesObject, 'kind' | 'metadata'>) =>
    `${child.kind ?? '?'} ${child.metadata?.namespace ?? owner.namespace ?? ''}/${child.metadata?.name ?? '?'}`;
  const ownedBy = (obj: k8s.KubernetesObject): boolean => controllerOf(obj)?.uid === owner.uid;
  const ownerName = `${owner.kind} ${owner.namespace ? `${owner.namespace}/` : ''}${owner.name}`;
  /** Places a child and refuses namespaces a namespaced owner cannot own children in. */
  const placeChild = async <T extends Pick<k8s.KubernetesObject, 'apiVersion' | 'kind' | 'metadata'>>(
    child: T,
    what: string,
  ): Promise<T> => {
    if (owner.namespace && child.metadata?.namespace && child.metadata.namespace !== owner.namespace) {
      throw new HomeostatError(
        'ERR_STEP_TERMINAL',
        `${what} ${describe(child)}: namespaced ${ownerName} can own children only in its own namespace`,
      );
    }
    return placed(objects, owner, child, what);
  };
  const refusal = (existing: k8s.KubernetesObject, child: k8s.KubernetesObject): HomeostatError => {
    const controller = controllerOf(existing);
    const why = controller
      ? `it is controlled by ${controller.kind} ${controller.name} (uid ${controller.uid}), not by ${ownerName}`
      : `it exists and is not controlled by ${ownerName}; homeostat does not adopt what it did not create`;
    return adoptionRefused(describe(child), why);
  };
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
      try {
        if (owner.namespace && !(await objects.isNamespaced(child.apiVersion ?? '', child.kind ?? ''))) {
          throw new HomeostatError(
            'ERR_STEP_TERMINAL',
            `apply ${describe(child)}: a cluster-scoped child cannot be owned by namespaced ${owner.kind} ` +
              `${owner.namespace}/${owner.name} (Kubernetes allows only cluster-scoped owners of cluster-scoped objects)`,
          );
        }
        const body = await placeChild(
          {
            ...child,
            metadata: {
              ...child.metadata,
              labels: {
                ...child.metadata?.labels,
                [childLabels.managedBy]: managedByValue,
                [childLabels.ownerUid]: owner.uid,
              },
              ownerReferences: [ownerReference],
            },
          },
          'apply',
        );
        // managedFields, resourceVersion and uid are the server's (or our preconditions), never the step's.
        delete body.metadata?.managedFields;
        delete body.metadata?.resourceVersion;
        delete body.metadata?.uid;
        let replaced = false;
        for (let attempt = 0; ; attempt++) {
          let existing: T | undefined;
          try {
            existing = await objects.read<T>(body as Parameters<typeof objects.read<T>>[0]);
          } catch (err) {
            if (!isNotFound(err)) throw err;
          }
          try {
            if (!existing) {
              existing = await objects.create(body, undefined, undefined, fieldManager);
            }
            if (!ownedBy(existing)) throw refusal(existing, body);
            const precondition = {
              ...body,
              metadata: { ...body.metadata, resourceVersion: existing.metadata?.resourceVersion },
            };
            let applied: T;
            try {
              applied = await objects.patch<T>(
                precondition,
                undefined,
                undefined,
                fieldManager,
                true,
                k8s.PatchStrategy.ServerSideApply,
              );
            } catch (err) {
              if (!isInvalid(err) || replaced) throw err;
              // 422 on a child this owner controls: entries another manager added to a list-map merge
              // with ours by key (a Service port renumbered by hand keeps its name beside ours: a
              // duplicate name). Put the child back as homeostat wants it — a JSON merge patch replaces
              // each list it sends whole — and apply again so the fields are homeostat's once more. A
              // desired state that is itself invalid fails the merge patch with the server's reason.
              await objects.patch<T>(
                replacementOf(precondition),
                undefined,
                undefined,
                fieldManager,
                undefined,
                k8s.PatchStrategy.MergePatch,
              );
              replaced = true;
              continue;
            }
            const mine = (applied.metadata?.managedFields ?? []).filter(
              (m) => m.manager === fieldManager && m.operation === 'Update' && !m.subresource,
            );
            if (mine.length > 0) {
              // The create's entry: drop it so the applies own exactly what they send (see above).
              applied = await objects.patch<T>(
                {
                  apiVersion: applied.apiVersion,
                  kind: applied.kind,
                  metadata: {
                    name: applied.metadata?.name,
                    ...(applied.metadata?.namespace ? { namespace: applied.metadata.namespace } : {}),
                    resourceVersion: applied.metadata?.resourceVersion,
                    managedFields: (applied.metadata?.managedFields ?? []).filter((m) => !mine.includes(m)),
                  },
                } as T,
                undefined,
                undefined,
                fieldManager,
                undefined,
                k8s.PatchStrategy.MergePatch,
              );
            }
            return applied;
          } catch (err) {
            // 409: created by someone else first, or changed since it was read: read and check again.
            if (isConflict(err) && attempt < childConflictRetries) continue;
            throw err;
          }
        }
      } catch (err) {
        throw fromKubernetesError(err, `apply ${describe(child)}`);
      }
    },
    async delete(child) {
      try {
        const placedChild = await placeChild(child, 'delete');
        const existing = await objects.read(placedChild as Parameters<typeof objects.read>[0]);
        if (!ownedBy(existing)) return; // not ours: left alone (deleting it would be the takeover)
        await objects.delete(placedChild, undefined, undefined, undefined, undefined, 'Background', {
          preconditions: { uid: existing.metadata?.uid },
        });
      } catch (err) {
        if (isNotFound(err)) return;
        throw fromKubernetesError(err, `delete ${describe(child)}`);
      }
    },
    async read<T extends k8s.KubernetesObject>(child: Pick<k8s.KubernetesObject, 'apiVersion' | 'kind' | 'metadata'>) {
      try {
        const placedChild = await placed(objects, owner, child, 'read');
        return await objects.read<T>(placedChild as Parameters<typeof objects.read<T>>[0]);
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
    const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
    if (code === 409) return;
    // A namespace being deleted refuses new objects, Events included (403 "… because it is being
    // terminated"): an Event is a record, not the work, so it must not hold back the finalizer that
    // lets the namespace go.
    const body: unknown = (err as { body?: unknown }).body;
    const text = typeof body === 'string' ? body : JSON.stringify(body ?? (err as Error).message);
    if (code === 403 && /being terminated/.test(text)) {
      return;
    }
    throw fromKubernetesError(err, `record event ${event.reason}`);
  }
}

/**
 * Reads any object for a step (`StepContext.read`): a namespaced kind without a namespace is read in
 * the owner's namespace (a cluster-scoped owner must name it); a missing object is `undefined`.
 */
export async function readObject<T extends k8s.KubernetesObject>(
  kc: k8s.KubeConfig,
  owner: ObjectIdentity,
  object: Pick<k8s.KubernetesObject, 'apiVersion' | 'kind'> & { metadata: { name: string; namespace?: string } },
): Promise<T | undefined> {
  const objects = objectApiFor(kc);
  const namespace = object.metadata.namespace ?? owner.namespace;
  try {
    const spec = await placed(objects, owner, object, 'read');
    return await objects.read<T>(spec);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw fromKubernetesError(err, `read ${object.kind} ${namespace ?? ''}/${object.metadata.name}`);
  }
}
