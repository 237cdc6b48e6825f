/**
 * The reconcile counters' series, exported at 0 from the moment a worker starts, per kind it serves, as
 * controller-runtime does for each controller it starts. A counter series that first appears at 1 shows
 * no `increase()` or `rate()` to Prometheus: without this, an operator's first failing pass after a
 * worker start would never fire the reconcile-errors alert (`deploy/monitoring/`).
 */
import type { MetricMeter } from '@temporalio/common';
import { controllerRuntimeMetricNames, objectWorkflowType, reconcileMetricNames } from '../core/definitions';
import type { Operator } from '../core/operator';
import type { ControllerRuntimeResult } from '../workflows/pass-metrics';

const results: readonly ControllerRuntimeResult[] = ['success', 'error', 'requeue', 'requeue_after'];

/**
 * Adds 0 to every reconcile counter of each of the operator's kinds, with the tags the object workflow's
 * metric meter gives the same counters (`namespace`, `taskQueue`, `workflowType`), so the series are the
 * ones its passes later count in.
 */
export function exportReconcileSeries(
  meter: MetricMeter,
  where: { readonly namespace: string; readonly taskQueue: string; readonly operator: Operator },
): void {
  const base = meter.withTags({
    namespace: where.namespace,
    taskQueue: where.taskQueue,
    workflowType: objectWorkflowType,
  });
  for (const { plan } of where.operator.reconcilers) {
    const own = base.withTags({ group: plan.group || 'core', kind: plan.kind });
    own.createCounter(reconcileMetricNames.errors, '', 'Reconcile passes that failed').add(0);
    const cr = base.withTags({ controller: plan.kind.toLowerCase() });
    cr.createCounter(
      controllerRuntimeMetricNames.errors,
      '',
      'Total number of reconciliation errors per controller',
    ).add(0);
    cr.createCounter(
      controllerRuntimeMetricNames.terminalErrors,
      '',
      'Total number of terminal reconciliation errors per controller',
    ).add(0);
    const total = cr.createCounter(
      controllerRuntimeMetricNames.total,
      '',
      'Total number of reconciliations per controller',
    );
    for (const result of results) total.add(0, { result });
  }
}
