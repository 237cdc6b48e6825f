/**
 * homeostat's authoring API (the package's main entry, `import … from 'homeostat'`): define
 * reconcilers and an operator, the error helpers steps throw, durations, and the types a step sees.
 * Only what this module exports is public for authors; everything else may change.
 */
export { defineReconciler, type ReconcilerDefinition, type StepDefinition } from './define-reconciler';
export { defineOperator, type OperatorDefinition } from './define-operator';
export { CrdError } from './crd-error';
export { customResourceDefinition, operatorCrds } from './crd';
export { specSchema } from './spec-schema';
export { statusSchema } from './status-schema';
export { structuralSchema } from './structural-schema';
export { celRule, CelRuleError, celValidationsOf, type CelValidation } from './cel';
export { renderCrdYaml } from './crd-yaml';
export { defaultStepHeartbeatTimeout, definePlan, durationMs, PlanError } from '../core/plan';
export type { Duration, ReconcilerPlan, StepPlan, StepRetry } from '../core/plan';
export {
  errorCatalog,
  HomeostatError,
  isHomeostatError,
  retryAfter,
  adoptionRefused,
  terminal,
  writesUnavailableInDryRun,
  type ErrorCode,
  type HomeostatErrorOptions,
} from '../core/errors';
export { OperatorError, type Operator } from '../core/operator';
export { childLabels, managedByValue } from '../core/labels';
export type {
  ChildClient,
  CrdColumn,
  CrdOptions,
  ObjectIdentity,
  PreviousStepResult,
  ReadDeclaration,
  Reconciler,
  ReferencedName,
  ReferenceWatch,
  StepContext,
  StepFn,
  StepOutputs,
  StepPreview,
  StepPreviewFn,
  StepResult,
} from '../core/reconciler';
export type {
  ChildDiff,
  DryRunResult,
  DryRunStep,
  DryRunStepOutcome,
  FieldChange,
  PlannedChange,
} from '../core/dry-run';
export type { ApprovalFacts, ApprovalRule } from '../core/approval';
export { defaultApprovalTimeout } from '../core/approval';
export type { ConditionSpec, ObjectRef, ObjectStatus, Phase } from '../core/definitions';
