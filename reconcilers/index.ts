/**
 * Reconcilers: one module per resource kind, each with a plain plan (imported by the workflow
 * bundle, see `builtin-plans.ts`), a zod spec schema and step implementations (activities), joined
 * by {@link defineReconciler}.
 */
import type { Reconciler } from './define-reconciler';

export { crdFor, defineReconciler } from './define-reconciler';
export type {
  ChildClient,
  ObjectIdentity,
  Reconciler,
  ReconcilerDefinition,
  StepContext,
  StepFn,
  StepResult,
} from './define-reconciler';
export { definePlan, executionLayers, findPlan, planRegistry, runnableSteps, stepActivityType } from './plan';
export type { Duration, PlanRegistry, ReconcilerPlan, StepPlan, StepRetry } from './plan';
export { builtinPlans } from './builtin-plans';

/** The built-in reconcilers a production worker registers (their plans are in `builtinPlans`). */
export const builtinReconcilers: readonly Reconciler<any>[] = []; // eslint-disable-line @typescript-eslint/no-explicit-any
