/**
 * What every bundle of homeostat's workflows is built with — the worker's, `npm run bundle`'s, the
 * demo's cached one and the replay tests' — so they all run the workflow code the same way.
 *
 * **Shared modules.** With the SDK's reusable V8 context (its default), each workflow evaluates the
 * bundle's modules again into a module cache of its own, so module state stays per workflow. For
 * homeostat's modules, which hold no state, that is heap and CPU spent per workflow for nothing: of the
 * 78 KiB and 2.8 ms that evaluating them took per new workflow (500 workflows in one context, measured
 * in-process), sharing them saves 56 KiB and 0.9 ms. At 10,000 cached workflows the worker's RSS fell
 * from 2,211 to 1,488 MiB (README "Sizing").
 * The modules in {@link sharedWorkflowModules} are evaluated once per worker thread instead, before
 * any workflow exists (`bundlerOptions.preloadModules`), and every workflow uses those instances. The
 * SDK deep-freezes them. A shared module must therefore keep nothing at module scope that a workflow
 * changes: no `let` or `var`, no container a workflow fills. `test/unit/workflow-bundle-options.test.ts`
 * checks that rule and that every module of the workflow code is on one of the two lists below.
 */
import type { BundleOptions } from '@temporalio/worker';

/**
 * The workflow interceptor modules of every bundle of homeostat's workflows (`bundleWorkflowCode`'s
 * `workflowInterceptorModules`): the pass trace's (`workflows/pass-trace.ts`; deterministic, and a
 * no-op for requests that carry no trace context).
 */
export const workflowInterceptorModules: readonly string[] = [require.resolve('../workflows/pass-trace')];

/**
 * The workflow code's modules that stay per workflow, relative to the repository root, and why: each
 * holds per-workflow state at module scope, or imports one that does.
 */
export const perWorkflowModules: Readonly<Record<string, string>> = {
  'workflows/pass-trace.ts': "the running pass's trace context, in module variables",
  'workflows/object-workflow.ts': 'imports workflows/pass-trace.ts',
  'workflows/index.ts': 'imports workflows/object-workflow.ts',
};

/**
 * The workflow code's modules evaluated once per worker thread and shared by every workflow
 * (`preloadModules`), relative to the repository root: every module of the workflow code not in
 * {@link perWorkflowModules}. Their imports are shared with them (the SDK's `@temporalio/workflow`
 * entry among them).
 */
export const sharedWorkflowModules: readonly string[] = [
  'core/approval.ts',
  'core/carried-state.ts',
  'core/definitions.ts',
  'core/dry-run.ts',
  'core/errors.ts',
  'core/fairness.ts',
  'core/plan.ts',
  'core/status.ts',
  'core/trace-context.ts',
  'core/workflow-code-version.ts',
  'workflows/approval-gate.ts',
  'workflows/bookkeeping.ts',
  'workflows/compatibility-check-workflow.ts',
  'workflows/object-entity.ts',
  'workflows/object-handlers.ts',
  'workflows/object-state.ts',
  'workflows/pass-metrics.ts',
  'workflows/pass-priority.ts',
  'workflows/pass-timer.ts',
  'workflows/plan-workflow.ts',
  'workflows/run-handoff.ts',
  'workflows/spec-memory.ts',
  'workflows/status-writer.ts',
  'workflows/step-runner-failure.ts',
  'workflows/step-runner.ts',
];

/** A module of {@link sharedWorkflowModules} as the bundler resolves it. */
const resolved = (path: string): string => require.resolve(`../${path.replace(/\.ts$/, '')}`);

/**
 * The options of a bundle of homeostat's workflows whose entry module is `workflowsPath`: the
 * interceptors and the shared modules. An entry of a team's own (a test fixture, an extension) gets
 * them too; the shared modules are pure, and unused ones cost one evaluation per worker thread.
 */
export function workflowBundleOptions(
  workflowsPath: string,
): Required<Pick<BundleOptions, 'workflowsPath' | 'workflowInterceptorModules' | 'preloadModules'>> {
  return {
    workflowsPath,
    workflowInterceptorModules: [...workflowInterceptorModules],
    preloadModules: sharedWorkflowModules.map(resolved),
  };
}
