/**
 * Asking a step's approval rule (`core/approval.ts`) from an activity, cheaply when the rule allows it.
 * The observe activity asks the rules of the pass's gated steps on every pass, so that only a step
 * whose rule names a reason costs the pass the `checkApproval` activity (preview, hash, status write).
 * The step's preview is computed only when the rule reads `observed`: a rule that decides from the spec
 * or a `read` (an image repository, a connection limit, a retention policy) costs no dry run at all.
 */
import type { ApprovalFacts, ApprovalRule } from '../core/approval';
import type { DryRunResult } from '../core/dry-run';
import type { ObjectRef } from '../core/definitions';
import type { Reconciler } from '../core/reconciler';
import type { ActivityContext } from './activity-context';
import { identityOf, readObject, type CustomObject } from './kubernetes';

/** The step's preview in a dry run, as the rule sees it (empty lists when it previewed nothing). */
export function observedOf(dryRun: DryRunResult, step: string): ApprovalFacts<unknown>['observed'] {
  const previewed = dryRun.steps.find((s) => s.name === step);
  return { changes: previewed?.changes ?? [], children: previewed?.children ?? [] };
}

/** What a rule sees of `obj`: its spec, the preview (`observed`, maybe lazy), whether it is being deleted, `read`. */
export function approvalFacts(
  c: ActivityContext,
  reconciler: Reconciler<unknown>,
  obj: CustomObject,
  deleting: boolean,
  observed: () => ApprovalFacts<unknown>['observed'],
): ApprovalFacts<unknown> {
  const parsed = reconciler.schema.safeParse(obj.spec ?? {});
  return {
    spec: parsed.success ? parsed.data : obj.spec,
    get observed() {
      return observed();
    },
    deleting,
    read: (o) => readObject(c.kc, identityOf(obj), reconciler.reads ?? [], o),
  };
}

/** Thrown inside a rule that reads `observed` before the preview was computed (caught below, never seen). */
const previewNeeded = new Error('the rule read the preview before it was computed');

/**
 * The gated steps of this pass (the plan's steps, or its cleanup steps when `deleting`) whose rule
 * names a reason now: the steps that go through `checkApproval`. A rule is first asked without a
 * preview; only one that reads `observed` gets the object's dry run (one for all steps), and is asked
 * again. A rule that fails, is missing from this worker or is `'always'` counts as asking: the check
 * decides (and reports the failure).
 */
export async function stepsAskingApproval(
  c: ActivityContext,
  ref: ObjectRef,
  reconciler: Reconciler<unknown>,
  obj: CustomObject,
  deleting: boolean,
  dryRun: () => Promise<DryRunResult>,
): Promise<string[]> {
  const steps = ((deleting ? reconciler.plan.cleanup : reconciler.plan.steps) ?? []).filter(
    (s) => s.approval !== undefined,
  );
  const asking: string[] = [];
  let ran: DryRunResult | undefined;
  for (const step of steps) {
    const rule: ApprovalRule<unknown> | undefined = reconciler.approvals?.[step.name];
    if (rule === undefined || rule === 'always') {
      asking.push(step.name);
      continue;
    }
    const ask = (observed: () => ApprovalFacts<unknown>['observed']): Promise<string | undefined> =>
      Promise.resolve(rule(approvalFacts(c, reconciler, obj, deleting, observed)));
    try {
      let reason: string | undefined;
      try {
        reason = await ask(() => {
          if (ran === undefined) throw previewNeeded;
          return observedOf(ran, step.name);
        });
      } catch (err) {
        if (err !== previewNeeded) throw err;
        ran ??= await dryRun();
        const done = ran;
        reason = await ask(() => observedOf(done, step.name));
      }
      if (reason !== undefined) asking.push(step.name);
    } catch (err) {
      c.log.warn({ ref, step: step.name, err }, 'approval rule failed; the approval check asks it again');
      asking.push(step.name);
    }
  }
  return asking;
}
