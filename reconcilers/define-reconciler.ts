/**
 * The reconciler definition API: a reconciler joins its plan (plain data, see `core/plan.ts`) with its
 * zod spec schema and its step implementations, which run as activities. Workflow code never imports
 * this file: the plan reaches the workflow through the observe activity's result.
 */
import type { z } from 'zod';
import { parseLabelSelector } from '../core/label-selector';
import type { ApprovalRule } from '../core/approval';
import { defaultApprovalTimeout } from '../core/approval';
import { definePlan, type Duration, type ReconcilerPlan, type StepPlan } from '../core/plan';
import { readDeclarationProblems } from '../core/read-scope';
import type { CrdOptions, ReadDeclaration, Reconciler, ReferenceWatch, StepFn, StepPreview } from '../core/reconciler';

type StepNames<L> = L extends readonly StepPlan<infer N>[] ? N : never;

/**
 * A step as {@link defineReconciler} takes it: its function, or its function (`run`) with a preview for
 * dry runs beside it ({@link StepPreview}: a function computing what it would change from reads only,
 * or `'children-only'` for a step that writes only through `ctx.children`).
 *
 * @example
 * ```ts
 * steps: {
 *   config: { run: applyConfig, preview: 'children-only' },
 *   dns: { run: upsertRecord, preview: async ({ spec }) => [`UPSERT A ${spec.host}`] },
 *   audit: sendAudit, // no preview: a dry run reports it "would run; no preview" and does not run it
 * }
 * ```
 */
export type StepDefinition<Spec> =
  | StepFn<Spec>
  | {
      readonly run: StepFn<Spec>;
      readonly preview?: StepPreview<Spec>;
      /**
       * The step runs only once a person with the RBAC verb `approve` approves it (`POST …/approve`,
       * `homeostat approve`): `'always'`, or a rule over the spec and the step's preview that returns why
       * approval is needed, or `undefined` when it is not ({@link ApprovalRule}). While it waits, the
       * object shows phase `AwaitingApproval` and an `Approved=False` condition with the reason and the
       * preview's changes. @default none: the step runs without approval
       */
      readonly approval?: ApprovalRule<Spec>;
      /**
       * How long the step waits for a decision before the pass ends `Degraded` with nothing done.
       * @default '7 days' ({@link defaultApprovalTimeout})
       */
      readonly approvalTimeout?: Duration;
    };

/** The argument of {@link defineReconciler}. */
export interface ReconcilerDefinition<P extends ReconcilerPlan, S extends z.ZodType> {
  /** The plan: plain data (it reaches the workflow through the observe activity, recorded in history). */
  readonly plan: P;
  /** The spec schema; also the CRD's `spec` schema. */
  readonly schema: S;
  /** An implementation for every step of the plan, with its preview beside it ({@link StepDefinition}). */
  readonly steps: { readonly [K in StepNames<P['steps']>]: StepDefinition<z.output<S>> };
  /** An implementation for every cleanup step of the plan, with its preview beside it. */
  readonly cleanup?: { readonly [K in StepNames<NonNullable<P['cleanup']>>]: StepDefinition<z.output<S>> };
  /** Extras of the generated CRD, or `false` when the kind is not homeostat's (a core kind). @default {} */
  readonly crd?: CrdOptions | false;
  /** Reconcile only objects matching this label selector. */
  readonly labelSelector?: string;
  /** Objects read but not owned whose changes re-reconcile their referrers. */
  readonly references?: readonly ReferenceWatch[];
  /**
   * Reads beyond the object's own namespace that its steps make with `read` ({@link ReadDeclaration}):
   * `[{ apiVersion: 'v1', kind: 'Namespace', scope: 'cluster' }]`. Any other read outside the object's
   * namespace fails the step terminally, without a request.
   * @default none: a namespaced object's steps read in its namespace only, a cluster-scoped one's nothing
   */
  readonly reads?: readonly ReadDeclaration[];
}

/**
 * Defines a reconciler. The step names of the plan and of the implementations must match: the type
 * checker requires every planned step, and this function rejects implementations that are not planned.
 *
 * @example
 * ```ts
 * import { defineOperator, definePlan, defineReconciler, terminal } from 'homeostat';
 * const widgetPlan = definePlan({
 *   group: 'homeostat.dev', version: 'v1alpha1', kind: 'Widget', plural: 'widgets', scope: 'Namespaced',
 *   steps: [
 *     { name: 'config', summary: 'apply the ConfigMap' },
 *     { name: 'deploy', dependsOn: ['config'], heartbeatTimeout: '10 seconds' },
 *     { name: 'dns' }, // no dependency: runs in parallel with `config`
 *   ],
 *   cleanup: [{ name: 'release-dns' }],
 *   driftCheckInterval: '10 minutes',
 * });
 * export const widget = defineReconciler({
 *   plan: widgetPlan,
 *   schema: z.object({ replicas: z.number().int().min(0) }),
 *   steps: {
 *     config: async ({ children, object, spec }) => {
 *       await children.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: object.name },
 *         data: { replicas: String(spec.replicas) } });
 *     },
 *     deploy: async ({ heartbeat }) => { heartbeat(); return { requeueAfter: '30s' }; },
 *     dns: async () => ({ message: 'record up to date' }),
 *   },
 *   cleanup: { 'release-dns': async () => {} },
 *   crd: { shortNames: ['wd'] },
 * });
 * export default defineOperator({ name: 'widgets', reconcilers: [widget] });
 * ```
 */
export function defineReconciler<const P extends ReconcilerPlan, S extends z.ZodType>(
  def: ReconcilerDefinition<P, S>,
): Reconciler<z.output<S>> {
  const planned = new Set([...def.plan.steps, ...(def.plan.cleanup ?? [])].map((s) => s.name));
  const impls: Record<string, StepFn<z.output<S>>> = {};
  const previews: Record<string, StepPreview<z.output<S>>> = {};
  const approvals: Record<string, ApprovalRule<z.output<S>>> = {};
  const timeouts: Record<string, Duration> = {};
  for (const [name, entry] of Object.entries({
    ...(def.steps as Record<string, StepDefinition<z.output<S>>>),
    ...((def.cleanup ?? {}) as Record<string, StepDefinition<z.output<S>>>),
  })) {
    if (typeof entry === 'function') impls[name] = entry;
    else if (typeof entry?.run === 'function') {
      impls[name] = entry.run;
      if (entry.preview !== undefined) {
        if (typeof entry.preview !== 'function' && entry.preview !== 'children-only')
          throw new Error(`${def.plan.kind}: step ${name}: preview must be a function or 'children-only'`);
        previews[name] = entry.preview;
      }
      if (entry.approval !== undefined) {
        if (typeof entry.approval !== 'function' && entry.approval !== 'always')
          throw new Error(`${def.plan.kind}: step ${name}: approval must be a function or 'always'`);
        approvals[name] = entry.approval;
        timeouts[name] = entry.approvalTimeout ?? defaultApprovalTimeout;
      } else if (entry.approvalTimeout !== undefined) {
        throw new Error(`${def.plan.kind}: step ${name}: approvalTimeout without an approval rule`);
      }
    } else throw new Error(`${def.plan.kind}: step ${name} must be a function or { run, preview }`);
  }
  for (const name of Object.keys(impls)) {
    if (!planned.has(name)) throw new Error(`${def.plan.kind}: step ${name} is implemented but not planned`);
  }
  for (const name of planned) {
    if (!impls[name]) throw new Error(`${def.plan.kind}: step ${name} is planned but not implemented`);
  }
  if (def.labelSelector !== undefined) parseLabelSelector(def.labelSelector); // throws, naming what is wrong
  const readProblems = readDeclarationProblems(def.reads ?? []);
  if (readProblems.length > 0) throw new Error(`${def.plan.kind}: ${readProblems.join('; ')}`);
  // The workflow sees only the plan: an approval step is marked in it (with its timeout), checked as
  // any plan's durations are.
  const gated = (list: readonly StepPlan[]): StepPlan[] =>
    list.map((s) => (timeouts[s.name] !== undefined ? { ...s, approval: { timeout: timeouts[s.name]! } } : s));
  const plan: ReconcilerPlan =
    Object.keys(approvals).length === 0
      ? def.plan
      : definePlan({
          ...def.plan,
          steps: gated(def.plan.steps),
          ...(def.plan.cleanup ? { cleanup: gated(def.plan.cleanup) } : {}),
        });
  return {
    plan,
    schema: def.schema as z.ZodType<z.output<S>>,
    steps: impls,
    ...(Object.keys(previews).length > 0 ? { previews } : {}),
    ...(Object.keys(approvals).length > 0 ? { approvals } : {}),
    ...(def.crd !== undefined ? { crd: def.crd } : {}),
    ...(def.labelSelector !== undefined ? { labelSelector: def.labelSelector } : {}),
    ...(def.references !== undefined ? { references: def.references } : {}),
    ...(def.reads !== undefined ? { reads: def.reads } : {}),
  };
}
