/**
 * The children a step manages through `StepContext.children`: created, then server-side applied, only
 * when this owner controls them (never adopted), labelled so the bridge watches them, and deleted only
 * when this owner controls them. Every client error leaves as a `HomeostatError`.
 */
import * as k8s from '@kubernetes/client-node';
import type { ChildClient, ObjectIdentity } from '../core/reconciler';
import {
  adoptionRefused,
  fromKubernetesError,
  HomeostatError,
  isConflict,
  isInvalid,
  isNotFound,
} from '../core/errors';
import { childLabels, managedByValue } from '../core/labels';
import { objectApiFor, placed } from './kubernetes';

/** The controller ownerReference of `obj`, if any. */
export function controllerOf(obj: k8s.KubernetesObject): k8s.V1OwnerReference | undefined {
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

/**
 * A child as homeostat applies it for `owner`: the owner's controller ownerReference and the labels the
 * bridge watches children by; the server's fields (managedFields, resourceVersion, uid) removed.
 */
export function desiredChild<T extends k8s.KubernetesObject>(owner: ObjectIdentity, child: T): T {
  const ownerReference: k8s.V1OwnerReference = {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.name,
    uid: owner.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
  const { managedFields: _m, resourceVersion: _r, uid: _u, ...metadata } = child.metadata ?? {};
  return {
    ...child,
    metadata: {
      ...metadata,
      labels: { ...child.metadata?.labels, [childLabels.managedBy]: managedByValue, [childLabels.ownerUid]: owner.uid },
      ownerReferences: [ownerReference],
    },
  };
}

/** The `owner` of a child as messages name it: `App team-a/web`. */
export const ownerNameOf = (owner: ObjectIdentity): string =>
  `${owner.kind} ${owner.namespace ? `${owner.namespace}/` : ''}${owner.name}`;

/** Why `existing` is not `owner`'s to change (homeostat does not adopt). */
export function refusalReason(existing: k8s.KubernetesObject, owner: ObjectIdentity): string {
  const controller = controllerOf(existing);
  return controller
    ? `it is controlled by ${controller.kind} ${controller.name} (uid ${controller.uid}), not by ${ownerNameOf(owner)}`
    : `it exists and is not controlled by ${ownerNameOf(owner)}; homeostat does not adopt what it did not create`;
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
  const ownerName = ownerNameOf(owner);
  /** Places a child and refuses namespaces a namespaced owner cannot own children in. */
  const placeChild = async <T extends Pick<k8s.KubernetesObject, 'apiVersion' | 'kind' | 'metadata'>>(
    child: T,
    what: string,
  ): Promise<T> => {
    if (owner.namespace && child.metadata?.namespace && child.metadata.namespace !== owner.namespace) {
      throw new HomeostatError(
        'ERR_STEP_TERMINAL',
        `${what} ${describe(child)}: namespaced ${ownerName} can own (and read) children only in its own namespace`,
      );
    }
    return placed(objects, owner, child, what);
  };
  const refusal = (existing: k8s.KubernetesObject, child: k8s.KubernetesObject): HomeostatError =>
    adoptionRefused(describe(child), refusalReason(existing, owner));
  return {
    async apply<T extends k8s.KubernetesObject>(child: T): Promise<T> {
      try {
        if (owner.namespace && !(await objects.isNamespaced(child.apiVersion ?? '', child.kind ?? ''))) {
          throw new HomeostatError(
            'ERR_STEP_TERMINAL',
            `apply ${describe(child)}: a cluster-scoped child cannot be owned by namespaced ${owner.kind} ` +
              `${owner.namespace}/${owner.name} (Kubernetes allows only cluster-scoped owners of cluster-scoped objects)`,
          );
        }
        // managedFields, resourceVersion and uid are the server's (or our preconditions), never the step's.
        const body = await placeChild(desiredChild(owner, child), 'apply');
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
        // Confined like writes: a namespaced owner reads children only in its own namespace.
        const placedChild = await placeChild(child, 'read');
        return await objects.read<T>(placedChild as Parameters<typeof objects.read<T>>[0]);
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw fromKubernetesError(err, `read ${describe(child)}`);
      }
    },
  };
}
