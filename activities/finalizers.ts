/**
 * homeostat's finalizer on a reconciled object: added or removed with a resourceVersion precondition
 * (re-read on 409), and the release of an object its reconciler no longer selects.
 */
import type { ObjectRef } from '../core/definitions';
import type { ReconcilerPlan } from '../core/plan';
import { isConflict } from '../core/errors';
import { statusAnnotations } from '../core/status';
import { finalizerName, type CustomObject, type StatusLocation } from './kubernetes';
import type { ActivityContext } from './activity-context';

/** The finalizer patches of one worker's activities. */
export interface Finalizers {
  /**
   * Patches `metadata.finalizers` to what `change` makes of them (`undefined`: nothing to change) while
   * the object is the one of `uid`. Returns the object as last read or written.
   */
  patchFinalizers(
    plan: ReconcilerPlan,
    ref: ObjectRef,
    uid: string,
    start: CustomObject | undefined,
    change: (finalizers: string[]) => string[] | undefined,
  ): Promise<CustomObject | undefined>;
  /** Lets go of an object its reconciler no longer selects (finalizer and status annotations removed). */
  release(plan: ReconcilerPlan, ref: ObjectRef, start: CustomObject, location: StatusLocation): Promise<void>;
}

/** Builds the finalizer patches on the shared clients of `c`. */
export function finalizers(c: ActivityContext): Finalizers {
  const { primary, conflictRetries, log } = c;

  /** Patches metadata.finalizers with a resourceVersion precondition, re-reading on 409. */
  const patchFinalizers = async (
    plan: ReconcilerPlan,
    ref: ObjectRef,
    uid: string,
    start: CustomObject | undefined,
    change: (finalizers: string[]) => string[] | undefined,
  ): Promise<CustomObject | undefined> => {
    let obj = start ?? (await primary.get(plan, ref));
    for (let i = 0; ; i++) {
      if (!obj || obj.metadata.uid !== uid) return obj;
      const next = change(obj.metadata.finalizers ?? []);
      if (!next) return obj;
      try {
        return await primary.patch(plan, ref, {
          metadata: { resourceVersion: obj.metadata.resourceVersion, finalizers: next },
        });
      } catch (err) {
        if (!isConflict(err) || i >= conflictRetries) throw err;
        obj = await primary.get(plan, ref);
      }
    }
  };

  /**
   * Lets go of an object its reconciler no longer selects: removes homeostat's finalizer and status
   * annotations (with a resourceVersion precondition, re-read on 409). Cleanup steps do not run: the
   * object is not being deleted, only no longer homeostat's.
   */
  const release = async (
    plan: ReconcilerPlan,
    ref: ObjectRef,
    start: CustomObject,
    location: StatusLocation,
  ): Promise<void> => {
    let obj: CustomObject | undefined = start;
    for (let i = 0; obj; i++) {
      const finalizers = obj.metadata.finalizers ?? [];
      const annotations = obj.metadata.annotations ?? {};
      const stale = location === 'annotations' ? Object.values(statusAnnotations).filter((k) => k in annotations) : [];
      if (!finalizers.includes(finalizerName) && stale.length === 0) return;
      try {
        await primary.patch(plan, ref, {
          metadata: {
            resourceVersion: obj.metadata.resourceVersion,
            finalizers: finalizers.filter((f) => f !== finalizerName),
            ...(stale.length > 0 ? { annotations: Object.fromEntries(stale.map((k) => [k, null])) } : {}),
          },
        });
        log.info({ ref, uid: obj.metadata.uid }, 'no longer selected by the label selector: released');
        return;
      } catch (err) {
        if (!isConflict(err) || i >= conflictRetries) throw err;
        obj = await primary.get(plan, ref);
      }
    }
  };

  return { patchFinalizers, release };
}
