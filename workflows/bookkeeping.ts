/**
 * The activities of a pass's own bookkeeping — observe (with the leading local steps it may run),
 * status writes and the finalizer — as the workflow calls them: their timeouts, retries and summaries.
 */
import { proxyActivities, proxyLocalActivities, type ActivityOptions } from '@temporalio/workflow';
import type { Activities, ObserveInput } from '../core/activity-contract';

/**
 * The start-to-close timeouts of the leading local steps observe may run, added up: the most its local
 * activity spends on steps (each step still within its own timeout).
 */
export const leadingStepsBudgetMs = 2 * 60_000;

/** The start-to-close timeout of the observe/status/finalizer activities. */
const coreTimeoutMs = 30_000;

/** Options of the observe/status/finalizer activities. */
const coreOptions: ActivityOptions = {
  startToCloseTimeout: coreTimeoutMs,
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
};

/**
 * The activities of a pass's own bookkeeping (observe, status, finalizer) run where `local` says: as
 * local activities in runs whose workflow-code version has them (1+), as regular ones in histories
 * recorded before (so those replay unchanged).
 */
export function coreActivities(local: boolean, summary: string): Activities {
  return local
    ? proxyLocalActivities<Activities>({ ...coreOptions, summary })
    : proxyActivities<Activities>({ ...coreOptions, summary });
}

/**
 * Observe that also runs the plan's leading chain of local steps (workflow-code version 2+), in one
 * local activity whose timeout leaves room for the steps' own.
 */
export function observeWithLeadingSteps(
  input: Omit<ObserveInput, 'leadingSteps'> & {
    leadingSteps: Omit<NonNullable<ObserveInput['leadingSteps']>, 'budgetMs'>;
  },
  summary: string,
): ReturnType<Activities['observeObject']> {
  return proxyLocalActivities<Activities>({
    ...coreOptions,
    startToCloseTimeout: coreTimeoutMs + leadingStepsBudgetMs,
    summary,
  }).observeObject({ ...input, leadingSteps: { budgetMs: leadingStepsBudgetMs, ...input.leadingSteps } });
}
