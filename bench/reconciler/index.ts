/**
 * The benchmark reconciler: `BenchObject` with three no-op steps, defined with homeostat's own
 * reconciler API, and its CRD generated the way the built-in CRDs are.
 */
import { z } from 'zod';
import { customResourceDefinition } from '../../reconcilers/crd';
import { defineReconciler } from '../../reconcilers/define-reconciler';
import { benchDriftPlan, benchPlan, benchRegularPlan } from './plan';

export { benchDriftPlan, benchGroup, benchPlan, benchRegularPlan, benchSteps } from './plan';

/** The spec of `BenchObject`: a round number (the storm bumps it) and an optional payload. */
export const benchSpec = z.object({
  /** Bumped by spec updates. @default 0 */
  round: z.number().int().min(0).default(0),
  /** Filler, so cached objects have a realistic size. @default '' */
  payload: z.string().max(4096).default(''),
});

/** A parsed `BenchObject` spec. */
export type BenchSpec = z.output<typeof benchSpec>;

const noOps = {
  first: async () => {},
  second: async () => {},
  third: async () => {},
};

/** The benchmark reconciler: every step returns at once; the steps run as local activities. */
export const benchReconciler = defineReconciler({ plan: benchPlan, schema: benchSpec, steps: noOps });

/** The same reconciler with its steps run as regular activities. */
export const benchRegularReconciler = defineReconciler({ plan: benchRegularPlan, schema: benchSpec, steps: noOps });

/** The reconciler with local steps and a drift check (the scale scenario's). */
export const benchDriftReconciler = defineReconciler({ plan: benchDriftPlan, schema: benchSpec, steps: noOps });

/** The CRD of `BenchObject` (status subresource, homeostat's status schema). */
export function benchCrd(): Record<string, unknown> {
  return customResourceDefinition(benchPlan, benchSpec, { categories: ['homeostat-bench'] });
}
