/**
 * The activities of the per-object workflow, built by {@link createActivities} from their clients:
 * observing the object (read, validate, add the finalizer if the plan has cleanup: `observe.ts`),
 * writing status (`status-writer.ts`), removing the finalizer (`finalizers.ts`), and one activity per
 * reconciler step (`step-invocation.ts`), and the dry run of an object (`plan-object.ts`). Activities keep no state between calls and may run more than
 * once. Status writes merge conditions by type, keeping those of other controllers. Status goes to the
 * status subresource of kinds homeostat defines and to annotations on kinds it does not (a `Namespace`:
 * see `statusAnnotations`); an object that no longer matches its reconciler's label selector is
 * released (finalizer and status annotations removed) and treated as gone.
 */
import { createCompatibilityActivities } from './compatibility-check';
import type { Activities, WriteStatusInput, WriteStatusResult } from '../core/activity-contract';
import { toApplicationFailure } from '../core/errors';
import { finalizerName, identityOf } from './kubernetes';
import { recordEvent } from './events';
import { activityContext, type ActivityDeps } from './activity-context';
import { finalizers } from './finalizers';
import { observeObject } from './observe';
import { planObject } from './plan-object';
import { planActivityType } from '../core/dry-run';
import { approvalCheckActivityType } from '../core/approval';
import { approvalCheck } from './approval-check';
import { statusWriter } from './status-writer';
import { stepInvoker } from './step-invocation';

export type { ActivityDeps };

/**
 * Builds the activities for a set of reconcilers. Every error leaves as an `ApplicationFailure` whose
 * type and retryability come from the error catalog.
 */
export function createActivities(deps: ActivityDeps): Activities & Record<string, (input: never) => Promise<unknown>> {
  const c = activityContext(deps);
  const { kc, primary, reporting, reconcilerFor } = c;
  const fin = finalizers(c);
  const status = statusWriter(c);
  const stepRunner = stepInvoker(c);

  /** Runs fn; maps anything thrown to an ApplicationFailure. */
  const guarded =
    <I, O>(fn: (input: I) => Promise<O>) =>
    async (input: I): Promise<O> => {
      try {
        return await fn(input);
      } catch (err) {
        throw toApplicationFailure(err);
      }
    };

  const activities: Activities = {
    observeObject: guarded(observeObject(c, fin, status, stepRunner)),

    writeStatus: guarded(async (input: WriteStatusInput): Promise<WriteStatusResult> => {
      const r = await status.writeOwnStatus(input);
      return r.written ? { written: true } : { written: false, reason: r.reason };
    }),

    removeFinalizer: guarded(async ({ ref, uid, event }) => {
      const { plan } = reconcilerFor(ref);
      const before = await primary.get(plan, ref);
      if (before && event && before.metadata.uid === uid) {
        await recordEvent(kc, identityOf(before), event, reporting);
      }
      await fin.patchFinalizers(plan, ref, uid, before, (f) =>
        f.includes(finalizerName) ? f.filter((x) => x !== finalizerName) : undefined,
      );
    }),
  };

  // The dry run (`planObjectWorkflow`): read-only, outside any object's workflow.
  return {
    ...stepRunner.steps,
    ...activities,
    ...createCompatibilityActivities(),
    [planActivityType]: guarded(planObject(c)),
    // Before a step with an approval rule: whether it needs approval now (read-only).
    [approvalCheckActivityType]: guarded(approvalCheck(c, status)),
  };
}
