/**
 * The upgrade scenario's operator in three versions: the benchmark reconciler (`BenchObject`, no-op
 * local steps) whose later versions add a step each (`benchUpgradePlans`). Every version is the same
 * operator, so its workers form one Worker Deployment; each runs as a version of its own.
 */
import type { Operator } from '../../core/operator';
import { defineReconciler } from '../../reconcilers/define-reconciler';
import { benchSpec } from './index';
import { benchUpgradePlans, type BenchUpgradeVersion } from './plan';

/** The operator name of every version (the Worker Deployment's name unless the scenario sets its own). */
export const benchUpgradeOperatorName = 'bench-upgrade';

const noOp = async (): Promise<void> => {};

/** Version `version` of the upgrade scenario's operator. */
export function benchUpgradeOperator(version: BenchUpgradeVersion): Operator {
  const plan = benchUpgradePlans[version];
  const steps = Object.fromEntries(plan.steps.map((s) => [s.name, noOp]));
  return {
    name: benchUpgradeOperatorName,
    reconcilers: [defineReconciler({ plan, schema: benchSpec, steps })],
  };
}
