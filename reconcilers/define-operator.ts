/** `defineOperator`: the one value the worker, the bridge, the API, CRD generation and the CLI take. */
import { assertOperator, type Operator } from '../core/operator';
import type { Reconciler } from '../core/reconciler';

/** The argument of {@link defineOperator}. */
export interface OperatorDefinition {
  /** A short kebab-case name, shown in logs. */
  readonly name: string;
  /**
   * The operator's version (letters, digits, `.`, `_`, `+`, `-`; e.g. `1.2.0`): part of its workers' build
   * ID, so a new version is rolled out as a new Worker Deployment Version (docs/upgrading.md). @default none
   */
  readonly version?: string;
  /** One reconciler per primary kind (from `defineReconciler`). */
  readonly reconcilers: readonly Reconciler<any>[]; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/**
 * Defines an operator: a set of reconcilers that run together. Checks it (unique kinds, every planned
 * step implemented) and throws an `OperatorError` listing every problem. Export it as the default
 * export (or as `operator`) of a module and run it with `homeostat worker --operator <module>`.
 *
 * @example
 * ```ts
 * export default defineOperator({ name: 'platform', reconcilers: [tenant, dnsRecord] });
 * ```
 */
export function defineOperator(def: OperatorDefinition): Operator {
  if (!/^[a-z][a-z0-9-]{0,62}$/.test(def.name)) {
    throw new Error(
      `operator name ${JSON.stringify(def.name)} must be kebab-case (a-z, 0-9, -), at most 63 characters`,
    );
  }
  if (def.version !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/.test(def.version)) {
    throw new Error(
      `operator version ${JSON.stringify(def.version)} must be letters, digits, '.', '_', '+' or '-', at most 64 characters`,
    );
  }
  const operator: Operator = Object.freeze({
    name: def.name,
    ...(def.version !== undefined ? { version: def.version } : {}),
    reconcilers: Object.freeze([...def.reconcilers]),
  });
  assertOperator(operator);
  return operator;
}
