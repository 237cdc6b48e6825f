/**
 * Baseline (a), the raw Temporal ceiling: the least a workflow can do for the same reconcile — wait
 * for a signal, run the same three no-op activities in a chain, then one status-write activity, and
 * wait again. No observe step, no finalizer, no search attributes, no coalescing beyond keeping the
 * newest request. Bundled on its own (not part of homeostat's workflow bundle).
 */
import { condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { RawActivities } from './activities';
import { rawPassesQuery, rawReconcileSignal, type RawRequest } from './definitions';

const acts = proxyActivities<RawActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds' },
});

/** The raw baseline workflow: one per object, a pass per signal. */
export async function rawWorkflow(): Promise<void> {
  let wanted: RawRequest | undefined;
  let passes = 0;
  setHandler(rawReconcileSignal, (request) => {
    if (!wanted || request.generation >= wanted.generation) wanted = request;
  });
  setHandler(rawPassesQuery, () => passes);
  for (;;) {
    await condition(() => wanted !== undefined);
    const request = wanted!;
    wanted = undefined;
    await acts.first(request);
    await acts.second(request);
    await acts.third(request);
    await acts.writeStatus(request);
    passes += 1;
  }
}
