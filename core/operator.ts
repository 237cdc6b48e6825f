/**
 * The operator value: the one thing every runtime entry point takes (the worker, the informer bridge,
 * the HTTP API, CRD generation and the CLI). Built with `defineOperator` from the authoring API; the
 * runtime reads it through the helpers here, which import nothing of homeostat's runtime.
 */
import type { ReconcilerPlan } from './plan';
import type { Reconciler } from './reconciler';
import { readDeclarationProblems } from './read-scope';

/** A set of reconcilers that run together: homeostat's unit of deployment. */
export interface Operator {
  /** A short name (kebab-case), shown in logs and used as the default field manager suffix. */
  readonly name: string;
  /**
   * The operator's own version (e.g. `1.2.0`), part of its workers' build ID (docs/upgrading.md): a new
   * version is a new Worker Deployment Version, rolled out with `homeostat rollout`. @default none
   */
  readonly version?: string;
  /** The reconcilers, one per primary kind. */
  readonly reconcilers: readonly Reconciler<any>[]; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** Thrown when an operator is malformed (duplicate kinds, steps planned but not implemented, …). */
export class OperatorError extends Error {
  override readonly name = 'OperatorError';
}

/** The plans of an operator's reconcilers. */
export function plansOf(operator: Operator): ReconcilerPlan[] {
  return operator.reconcilers.map((r) => r.plan);
}

/**
 * Checks that an operator can run: kinds are unique, every planned step (and cleanup step) has an
 * implementation and every implementation is planned. Returns every problem, one line each.
 */
export function operatorProblems(operator: Operator): string[] {
  const problems: string[] = [];
  if (!operator || typeof operator !== 'object' || !Array.isArray(operator.reconcilers)) {
    return ['not an operator: expected an object with a reconcilers array (use defineOperator)'];
  }
  if (operator.reconcilers.length === 0) problems.push(`operator ${operator.name}: no reconcilers`);
  const kinds = new Set<string>();
  for (const r of operator.reconcilers as readonly (Reconciler<unknown> | undefined)[]) {
    const plan = r?.plan;
    if (!plan || typeof plan.kind !== 'string') {
      problems.push(`operator ${operator.name}: a reconciler has no plan`);
      continue;
    }
    const key = `${plan.kind}.${plan.group}`;
    if (kinds.has(key)) problems.push(`${key}: defined twice`);
    kinds.add(key);
    const planned = [...plan.steps, ...(plan.cleanup ?? [])].map((s) => s.name);
    const steps = (r?.steps ?? {}) as Readonly<Record<string, unknown>>;
    const implemented = Object.keys(steps);
    const missing = planned.filter((n) => typeof steps[n] !== 'function');
    const unplanned = implemented.filter((n) => !planned.includes(n));
    if (missing.length > 0) problems.push(`${key}: no implementation for planned steps ${missing.join(', ')}`);
    if (unplanned.length > 0) problems.push(`${key}: steps ${unplanned.join(', ')} are implemented but not planned`);
    for (const p of readDeclarationProblems(r?.reads ?? [])) problems.push(`${key}: ${p}`);
  }
  return problems;
}

/** Throws an {@link OperatorError} listing every problem of {@link operatorProblems}. */
export function assertOperator(operator: Operator): void {
  const problems = operatorProblems(operator);
  if (problems.length > 0) throw new OperatorError(`invalid operator:\n  ${problems.join('\n  ')}`);
}

/** The reconciler of an object's group and kind, if the operator has one. */
export function reconcilerFor(
  operator: Operator,
  ref: { readonly group: string; readonly kind: string },
): Reconciler<unknown> | undefined {
  return operator.reconcilers.find((r) => r.plan.group === ref.group && r.plan.kind === ref.kind) as
    Reconciler<unknown> | undefined;
}
