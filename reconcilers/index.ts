/**
 * Reconcilers: one module per resource kind, each with a plain plan (imported by the workflow
 * bundle, see `builtin-plans.ts`), a zod spec schema and step implementations (activities), joined
 * by {@link defineReconciler}.
 */
import { appReconciler } from './app/reconciler';
import type { Reconciler } from './define-reconciler';
import { postgresDatabaseReconciler } from './postgres-database/reconciler';

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
export { builtinCrds } from './builtin-crds';
export { customResourceDefinition, structuralSchema, type CrdOptions } from './crd';
export { watchedResourcesFor } from './watched-resources';

/** The built-in reconcilers a production worker registers (their plans are in `builtinPlans`). */
export const builtinReconcilers: readonly Reconciler<any>[] = [postgresDatabaseReconciler, appReconciler]; // eslint-disable-line @typescript-eslint/no-explicit-any
