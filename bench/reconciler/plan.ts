/**
 * The plans of the benchmark reconciler `BenchObject` (`bench.homeostat.dev/v1alpha1`): three no-op
 * steps in a chain (`first` → `second` → `third`), so a pass costs what the orchestration costs and
 * nothing else. {@link benchPlan} runs them as local activities (homeostat's recommendation for short,
 * idempotent steps), {@link benchRegularPlan} as regular activities (as the raw baseline does). Plain
 * data, bundled into the benchmark's workflow entry.
 */
import { definePlan, type StepPlan } from '../../core/plan';

/** The benchmark CRD's API group. */
export const benchGroup = 'bench.homeostat.dev';

const chain = (execution: 'local' | 'regular') =>
  [
    { name: 'first', summary: 'no-op step 1', startToCloseTimeout: '30 seconds', execution },
    { name: 'second', dependsOn: ['first'], summary: 'no-op step 2', startToCloseTimeout: '30 seconds', execution },
    { name: 'third', dependsOn: ['second'], summary: 'no-op step 3', startToCloseTimeout: '30 seconds', execution },
  ] as const satisfies readonly StepPlan[];

const common = {
  group: benchGroup,
  version: 'v1alpha1',
  kind: 'BenchObject',
  plural: 'benchobjects',
  scope: 'Namespaced',
} as const;

/** The drift checks of the upgrade scenario's plans. */
const upgradeDrift = {
  driftCheckInterval: '1 minute',
  driftCheckBounds: { min: '10 seconds' },
} as const;

/** A no-op local step `name` after `after` (the steps the upgrade scenario's versions add). */
const upgradeStep = (name: string, after: string): StepPlan => ({
  name,
  dependsOn: [after],
  summary: `no-op step added by a later operator version`,
  startToCloseTimeout: '30 seconds',
  execution: 'local',
});

/** The plan of `BenchObject`: three dependent no-op steps run as local activities, no drift check. */
export const benchPlan = definePlan({ ...common, steps: chain('local') });

/** The same plan with the steps run as regular activities (the "homeostat, regular steps" system). */
export const benchRegularPlan = definePlan({ ...common, steps: chain('regular') });

/**
 * The plan of {@link benchPlan} with a drift check at the built-ins' default interval (30 minutes), which
 * an object may shorten with the `homeostat.dev/drift-check-interval` annotation (down to 30 seconds):
 * the scale scenario's objects, measured at rest with their drift checks.
 */
export const benchDriftPlan = definePlan({ ...common, steps: chain('local'), driftCheckInterval: '30 minutes' });

/** The number of steps of {@link benchPlan}. */
export const benchSteps = benchPlan.steps.length;

/**
 * The plans of the upgrade scenario's three operator versions, all of `BenchObject`: version 1 is the
 * bench plan; version 2 adds a step `fourth` after `third`, version 3 a step `fifth` after that, so an
 * object's status shows which version's plan its last pass ran (`FourthReady`, `FifthReady`). Drift
 * checks every minute by default; objects may ask for as little as 10 seconds (the small size).
 */
export const benchUpgradePlans = {
  1: definePlan({ ...common, steps: chain('local'), ...upgradeDrift }),
  2: definePlan({ ...common, steps: [...chain('local'), upgradeStep('fourth', 'third')], ...upgradeDrift }),
  3: definePlan({
    ...common,
    steps: [...chain('local'), upgradeStep('fourth', 'third'), upgradeStep('fifth', 'fourth')],
    ...upgradeDrift,
  }),
} as const;

/** An operator version of the upgrade scenario. */
export type BenchUpgradeVersion = keyof typeof benchUpgradePlans;
