/**
 * Observing an object, the first activity of every pass: read it (gone, or no longer selected by its
 * reconciler's label selector: not found), validate its spec (its size too: `spec-record.ts`; an
 * unchanged one is returned by digest only when the workflow has it), add or remove homeostat's finalizer as
 * its plan needs, read its drift-check interval, and run the pass's leading local steps with their
 * status write when the workflow asks for them.
 */
import type { ObjectSnapshot, Observation, ObserveInput } from '../core/activity-contract';
import { matchesLabels, parseLabelSelector, type LabelRequirement } from '../core/label-selector';
import { driftCheckAnnotation, driftIntervalMs } from '../core/plan';
import type { Reconciler } from '../core/reconciler';
import { HomeostatError } from '../core/errors';
import { finalizerName, identityOf, statusLocationOf, type CustomObject, type StatusLocation } from './kubernetes';
import { onlyOwned, ownedConditionTypes, ownedStatus } from './owned-status';
import { retiredSteps } from '../core/status';
import { oversizeProblem, specDigestOf } from './spec-record';
import type { ActivityContext } from './activity-context';
import type { Finalizers } from './finalizers';
import type { StatusWriter } from './status-writer';
import type { StepInvoker } from './step-invocation';
import { stepsAskingApproval } from './approval-rules';
import { planObject } from './plan-object';

/**
 * The object as the workflow sees it; its status holds only the conditions homeostat owns (`owned`:
 * another controller's are not the workflow's to compare, and would make every pass write).
 */
function snapshotOf(obj: CustomObject, location: StatusLocation, owned?: ReadonlySet<string>): ObjectSnapshot {
  const status = ownedStatus(obj, location);
  return {
    uid: obj.metadata.uid ?? '',
    generation: obj.metadata.generation ?? 0,
    resourceVersion: obj.metadata.resourceVersion ?? '',
    deleting: obj.metadata.deletionTimestamp != null,
    hasFinalizer: (obj.metadata.finalizers ?? []).includes(finalizerName),
    status: owned ? onlyOwned(status, owned) : status,
    identity: identityOf(obj),
  };
}

/** Formats zod issues as one readable line: `spec.replicas: Too small: expected number to be >=0`. */
export function formatIssues(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  return issues.map((i) => `${['spec', ...i.path.map(String)].join('.')}: ${i.message}`).join('; ');
}

/** Builds the `observeObject` activity (unguarded: errors leave as thrown). */
export function observeObject(
  c: ActivityContext,
  fin: Finalizers,
  status: StatusWriter,
  stepRunner: StepInvoker,
): (input: ObserveInput) => Promise<Observation> {
  const { primary, log, reconcilers, reconcilerFor } = c;
  // Parsed once: a selector that does not parse fails the worker's start, not a pass.
  const selectors = new Map<Reconciler<unknown>, LabelRequirement[]>();
  for (const r of reconcilers) if (r.labelSelector) selectors.set(r, parseLabelSelector(r.labelSelector));
  const dryRunOf = planObject(c);
  /** The steps whose approval rule asks now, when the workflow wants them and the plan gates any. */
  const approvalsAsked = async (
    input: ObserveInput,
    reconciler: Reconciler<unknown>,
    obj: CustomObject,
    deleting: boolean,
  ): Promise<{ approvalsAsked?: string[] }> =>
    input.approvalRules && reconciler.approvals !== undefined
      ? {
          approvalsAsked: await stepsAskingApproval(c, input.ref, reconciler, obj, deleting, () =>
            dryRunOf({ ref: input.ref }),
          ),
        }
      : {};

  return async (input: ObserveInput): Promise<Observation> => {
    const { ref } = input;
    const reconciler = reconcilerFor(ref);
    const { plan, schema } = reconciler;
    const location = statusLocationOf(reconciler);
    let obj = await primary.get(plan, ref);
    if (!obj) return { found: false };
    const selector = selectors.get(reconciler);
    if (selector && !matchesLabels(selector, obj.metadata.labels)) {
      // No longer selected (its label was removed): homeostat lets go of it, as if it were gone.
      await fin.release(plan, ref, obj, location);
      return { found: false };
    }
    // Too large to record, whatever the schema allows: refused before anything of it is recorded.
    const oversize = oversizeProblem(obj.spec);
    if (oversize !== undefined) {
      throw new HomeostatError('ERR_INVALID_SPEC', `invalid spec: ${oversize}`, { details: snapshotOf(obj, location) });
    }
    const parsed = schema.safeParse(obj.spec ?? {});
    /** The spec, or only its digest when the run has it already (`knownSpecDigest`). */
    const specOf = (spec: unknown): { spec?: unknown; specDigest: string; specUnchanged?: true } => {
      const specDigest = specDigestOf(spec);
      return specDigest === input.knownSpecDigest ? { specDigest, specUnchanged: true } : { spec, specDigest };
    };
    if (obj.metadata.deletionTimestamp != null) {
      const spec = specOf(parsed.success ? parsed.data : obj.spec);
      return {
        found: true,
        ...snapshotOf(obj, location),
        ...spec,
        plan,
        ...(await approvalsAsked(input, reconciler, obj, true)),
      };
    }
    if (!parsed.success) {
      throw new HomeostatError('ERR_INVALID_SPEC', `invalid spec: ${formatIssues(parsed.error.issues)}`, {
        details: snapshotOf(obj, location),
      });
    }
    // The finalizer holds deletion for the cleanup steps, so only a plan with cleanup gets one; one
    // left by an older homeostat (which added it to every object) on a plan without cleanup goes.
    const wantsFinalizer = (plan.cleanup?.length ?? 0) > 0;
    if ((obj.metadata.finalizers ?? []).includes(finalizerName) !== wantsFinalizer) {
      obj = await fin.patchFinalizers(plan, ref, obj.metadata.uid ?? '', obj, (f) => {
        if (f.includes(finalizerName) === wantsFinalizer) return undefined;
        return wantsFinalizer ? [...f, finalizerName] : f.filter((x) => x !== finalizerName);
      });
      if (!obj) return { found: false };
      log.info({ ref, uid: obj.metadata.uid }, wantsFinalizer ? 'finalizer added' : 'finalizer removed: no cleanup');
    }
    // The object's own drift-check interval, only when it asks for one (the observation is history).
    const asked = obj.metadata.annotations?.[driftCheckAnnotation];
    const drift = asked === undefined ? {} : driftIntervalMs(plan, asked);
    if (drift.problem) log.warn({ ref, problem: drift.problem }, 'drift-check annotation ignored');
    // A step's previous success belongs to the object the workflow knew: a re-created one gets none.
    const previous = input.leadingSteps?.previous;
    // Steps the workflow ran under an earlier plan: their conditions are homeostat's, and go.
    const retired = previous?.uid === obj.metadata.uid ? retiredSteps(plan, Object.keys(previous?.steps ?? {})) : [];
    const owned = ownedConditionTypes(plan, {}, retired);
    const snapshot = snapshotOf(obj, location, owned);
    // Asked before the leading steps: a gated step whose rule needs no approval may run among them.
    const gates = await approvalsAsked(input, reconciler, obj, false);
    const leading = input.leadingSteps
      ? await stepRunner.runLeadingSteps(
          reconciler,
          { ref, identity: snapshot.identity, spec: parsed.data },
          input.leadingSteps.budgetMs,
          previous?.uid === snapshot.identity.uid ? previous.steps : undefined,
          (step) => gates.approvalsAsked?.includes(step) === false,
        )
      : [];
    const pass = input.leadingSteps?.status?.pass;
    const written =
      pass !== undefined ? await status.writePassStatus(plan, ref, obj, snapshot, leading, pass, retired) : undefined;
    return {
      found: true,
      ...(written ? snapshotOf(written, location, owned) : snapshot),
      ...(written ? { statusWritten: true } : {}),
      ...(asked !== undefined && drift.ms !== undefined ? { driftCheckIntervalMs: drift.ms } : {}),
      ...specOf(parsed.data),
      plan,
      ...(leading.length > 0 ? { leading } : {}),
      ...gates,
    };
  };
}
