/**
 * The children client of a dry run (`StepContext.children` when `ctx.dryRun`): every apply is a
 * server-side apply with `dryRun: All` — the same field manager, `force` and ownership rules as the
 * real one (`children.ts`) — and every delete a check of what a delete would do; each records a
 * {@link ChildDiff} of the dry-run result against the live child instead of writing. Reads see the
 * children this dry run already applied, so a later step reads what an earlier one would have written
 * (a generated password, a ConfigMap's data).
 */
import * as k8s from '@kubernetes/client-node';
import type { ChildDiff } from '../core/dry-run';
import { fieldDiff } from '../core/field-diff';
import type { ChildClient, ObjectIdentity } from '../core/reconciler';
import { adoptionRefused, fromKubernetesError, HomeostatError, isNotFound } from '../core/errors';
import { controllerOf, desiredChild, ownerNameOf, refusalReason } from './children';
import { objectApiFor, placed } from './kubernetes';

/** A dry-run {@link ChildClient} and the diffs it recorded. */
export interface DryRunChildren {
  readonly client: ChildClient;
  /** Takes the diffs recorded since the last call (one step's). */
  readonly take: () => ChildDiff[];
}

type Named = Pick<k8s.KubernetesObject, 'apiVersion' | 'kind' | 'metadata'>;

const keyOf = (o: Named): string =>
  `${o.apiVersion ?? ''}/${o.kind ?? ''}/${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

/**
 * A dry-run children client for `owner` (whose UID may be one the API server made up for a dry-run
 * create, when a manifest of a new object is planned). Nothing it sends writes: creates and applies
 * carry `dryRun=All`; deletes are not sent at all.
 */
export function dryRunChildren(kc: k8s.KubeConfig, owner: ObjectIdentity, fieldManager: string): DryRunChildren {
  const objects = objectApiFor(kc);
  const applied = new Map<string, k8s.KubernetesObject | null>();
  let diffs: ChildDiff[] = [];
  const ownerName = ownerNameOf(owner);
  const describe = (child: Named) =>
    `${child.kind ?? '?'} ${child.metadata?.namespace ?? owner.namespace ?? ''}/${child.metadata?.name ?? '?'}`;
  const place = async <T extends Named>(child: T, what: string): Promise<T> => {
    if (owner.namespace && child.metadata?.namespace && child.metadata.namespace !== owner.namespace) {
      throw new HomeostatError(
        'ERR_STEP_TERMINAL',
        `${what} ${describe(child)}: namespaced ${ownerName} can own (and read) children only in its own namespace`,
      );
    }
    return placed(objects, owner, child, what);
  };
  const live = async <T extends k8s.KubernetesObject>(child: Named): Promise<T | undefined> => {
    try {
      return await objects.read<T>(child as Parameters<typeof objects.read<T>>[0]);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };
  const record = (child: Named, action: ChildDiff['action'], fields: ChildDiff['fields'], reason?: string) =>
    diffs.push({
      apiVersion: child.apiVersion ?? '',
      kind: child.kind ?? '',
      ...(child.metadata?.namespace ? { namespace: child.metadata.namespace } : {}),
      name: child.metadata?.name ?? '',
      action,
      fields,
      ...(reason !== undefined ? { reason } : {}),
    });

  const client: ChildClient = {
    async apply<T extends k8s.KubernetesObject>(child: T): Promise<T> {
      try {
        if (owner.namespace && !(await objects.isNamespaced(child.apiVersion ?? '', child.kind ?? ''))) {
          throw new HomeostatError(
            'ERR_STEP_TERMINAL',
            `apply ${describe(child)}: a cluster-scoped child cannot be owned by namespaced ${ownerName}`,
          );
        }
        const body = await place(desiredChild(owner, child), 'apply');
        const existing = await live<T>(body);
        let result: T;
        if (!existing) {
          result = await objects.create(body, undefined, 'All', fieldManager);
          record(body, 'create', fieldDiff(undefined, result));
        } else if (controllerOf(existing)?.uid !== owner.uid) {
          const reason = refusalReason(existing, owner);
          record(body, 'refused', [], reason);
          throw adoptionRefused(describe(child), reason);
        } else {
          const precondition = {
            ...body,
            metadata: { ...body.metadata, resourceVersion: existing.metadata?.resourceVersion },
          };
          result = await objects.patch<T>(
            precondition,
            undefined,
            'All',
            fieldManager,
            true,
            k8s.PatchStrategy.ServerSideApply,
          );
          const fields = fieldDiff(existing, result);
          record(body, fields.length > 0 ? 'update' : 'unchanged', fields);
        }
        applied.set(keyOf(body), result);
        return result;
      } catch (err) {
        throw fromKubernetesError(err, `dry-run apply ${describe(child)}`);
      }
    },
    async delete(child) {
      try {
        const target = await place(child, 'delete');
        const existing = applied.has(keyOf(target)) ? applied.get(keyOf(target)) : await live(target);
        applied.set(keyOf(target), null);
        // Not there, or not ours (a real delete leaves it alone): nothing would happen.
        if (!existing || controllerOf(existing)?.uid !== owner.uid) return;
        record(target, 'delete', []);
      } catch (err) {
        throw fromKubernetesError(err, `dry-run delete ${describe(child)}`);
      }
    },
    async read<T extends k8s.KubernetesObject>(child: Named): Promise<T | undefined> {
      try {
        const target = await place(child, 'read');
        const key = keyOf(target);
        if (applied.has(key)) return (applied.get(key) ?? undefined) as T | undefined;
        return await live<T>(target);
      } catch (err) {
        throw fromKubernetesError(err, `read ${describe(child)}`);
      }
    },
  };
  return {
    client,
    take: () => {
      const out = diffs;
      diffs = [];
      return out;
    },
  };
}
