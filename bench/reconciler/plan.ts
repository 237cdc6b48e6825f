/**
 * The plan of the benchmark reconciler `BenchObject` (`bench.homeostat.dev/v1alpha1`): three no-op
 * steps in a chain (`first` → `second` → `third`), so a pass costs what the orchestration costs and
 * nothing else. Plain data, bundled into the benchmark's workflow entry.
 */
import { definePlan } from '../../core/plan';

/** The benchmark CRD's API group. */
export const benchGroup = 'bench.homeostat.dev';

/** The plan of `BenchObject`: three dependent no-op steps, no drift check. */
export const benchPlan = definePlan({
  group: benchGroup,
  version: 'v1alpha1',
  kind: 'BenchObject',
  plural: 'benchobjects',
  scope: 'Namespaced',
  steps: [
    { name: 'first', summary: 'no-op step 1', startToCloseTimeout: '30 seconds' },
    { name: 'second', dependsOn: ['first'], summary: 'no-op step 2', startToCloseTimeout: '30 seconds' },
    { name: 'third', dependsOn: ['second'], summary: 'no-op step 3', startToCloseTimeout: '30 seconds' },
  ],
});

/** The number of steps of {@link benchPlan}. */
export const benchSteps = benchPlan.steps.length;
