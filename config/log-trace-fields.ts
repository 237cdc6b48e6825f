/**
 * Trace IDs on log lines (issue 30): a pino `mixin` that adds `trace_id` and `span_id` of the active
 * span, so a log line leads to its trace. Nothing is added outside a span, or when tracing is off
 * (no span is ever active then).
 */
import { trace } from '@opentelemetry/api';

/** The active span's IDs as log fields (`trace_id`, `span_id`), or none. Pass it as pino's `mixin`. */
export function traceLogFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return trace.isSpanContextValid(span.spanContext()) ? { trace_id: traceId, span_id: spanId } : {};
}
