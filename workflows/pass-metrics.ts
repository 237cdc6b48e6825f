/**
 * The reconcile metrics of an object's passes, emitted through the workflow's metric meter under two
 * sets of names: homeostat's own (`reconcileMetricNames`, labelled `group`, `kind`) and
 * controller-runtime's (`controllerRuntimeMetricNames`, labelled `controller`: the lowercased kind, as
 * controller-runtime's builder names a controller), so kubebuilder dashboards read homeostat as they
 * read any operator. Metrics are not commands: emitting them leaves the history unchanged, and the SDK
 * drops them while replaying, so a pass is counted once however often its history is replayed.
 */
import { metricMeter } from '@temporalio/workflow';
import {
  controllerRuntimeMetricNames,
  reconcileMetricNames,
  type ObjectRef,
  type PassResult,
} from '../core/definitions';

/** Records finished passes of one object. */
export interface PassMetrics {
  /**
   * Counts a pass with its result and records its duration; `requeueAfterMs` is the requeue its steps
   * asked for, if any.
   */
  record(result: PassResult, seconds: number, requeueAfterMs?: number): void;
}

/** controller-runtime's `result` label of a reconcile: `success`, `error`, `requeue` or `requeue_after`. */
export type ControllerRuntimeResult = 'success' | 'error' | 'requeue' | 'requeue_after';

/**
 * The controller-runtime result of a pass: a failed pass (`degraded`, `invalid`) is an `error`; a pass
 * whose steps asked for a requeue is `requeue_after`; a pass left `reconciling` (it runs again when its
 * work progresses) or `superseded` by a newer request is a `requeue`; the rest succeeded.
 */
export function controllerRuntimeResult(result: PassResult, requeueAfterMs?: number): ControllerRuntimeResult {
  if (result === 'degraded' || result === 'invalid') return 'error';
  if (requeueAfterMs !== undefined && requeueAfterMs > 0) return 'requeue_after';
  if (result === 'reconciling' || result === 'superseded') return 'requeue';
  return 'success';
}

/** The pass metrics of the object `ref`, tagged with its group and kind. */
export function passMetrics(ref: ObjectRef): PassMetrics {
  const meter = metricMeter.withTags({ group: ref.group || 'core', kind: ref.kind });
  const total = meter.createCounter(reconcileMetricNames.total, '', 'Reconcile passes, by result');
  const errors = meter.createCounter(reconcileMetricNames.errors, '', 'Reconcile passes that failed');
  const time = meter.createHistogram(reconcileMetricNames.time, 'float', 's', 'Duration of reconcile passes');
  const cr = metricMeter.withTags({ controller: ref.kind.toLowerCase() });
  const crTotal = cr.createCounter(
    controllerRuntimeMetricNames.total,
    '',
    'Total number of reconciliations per controller',
  );
  const crErrors = cr.createCounter(
    controllerRuntimeMetricNames.errors,
    '',
    'Total number of reconciliation errors per controller',
  );
  const crTerminal = cr.createCounter(
    controllerRuntimeMetricNames.terminalErrors,
    '',
    'Total number of terminal reconciliation errors per controller',
  );
  const crTime = cr.createHistogram(
    controllerRuntimeMetricNames.time,
    'float',
    's',
    'Length of time per reconciliation per controller',
  );
  return {
    record(result, seconds, requeueAfterMs) {
      const failed = result === 'degraded' || result === 'invalid';
      total.add(1, { result });
      // Adding 0 on success exports the series from the first pass on, as controller-runtime does.
      errors.add(failed ? 1 : 0);
      time.record(seconds);
      crTotal.add(1, { result: controllerRuntimeResult(result, requeueAfterMs) });
      crErrors.add(failed ? 1 : 0);
      // An invalid spec is controller-runtime's TerminalError: retrying the same spec cannot fix it.
      crTerminal.add(result === 'invalid' ? 1 : 0);
      crTime.record(seconds);
    },
  };
}
