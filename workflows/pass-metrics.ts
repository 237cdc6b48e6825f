/**
 * The reconcile metrics of an object's passes (controller-runtime's names, `reconcileMetricNames`),
 * emitted through the workflow's metric meter. Metrics are not commands: emitting them leaves the
 * history unchanged, and the SDK drops them while replaying, so a pass is counted once however often
 * its history is replayed.
 */
import { metricMeter } from '@temporalio/workflow';
import { reconcileMetricNames, type ObjectRef, type PassResult } from '../core/definitions';

/** Records finished passes of one object. */
export interface PassMetrics {
  /** Counts a pass with its result and records its duration. */
  record(result: PassResult, seconds: number): void;
}

/** The pass metrics of the object `ref`, tagged with its group and kind. */
export function passMetrics(ref: ObjectRef): PassMetrics {
  const meter = metricMeter.withTags({ group: ref.group || 'core', kind: ref.kind });
  const total = meter.createCounter(reconcileMetricNames.total, '', 'Reconcile passes, by result');
  const errors = meter.createCounter(reconcileMetricNames.errors, '', 'Reconcile passes that failed');
  const time = meter.createHistogram(reconcileMetricNames.time, 'float', 's', 'Duration of reconcile passes');
  return {
    record(result, seconds) {
      total.add(1, { result });
      // Adding 0 on success exports the series from the first pass on, as controller-runtime does.
      errors.add(result === 'degraded' || result === 'invalid' ? 1 : 0);
      time.record(seconds);
    },
  };
}
