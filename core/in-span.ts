/**
 * Running work in a span of homeostat's tracer: the span is active while the work runs (so its
 * Temporal calls, HTTP requests and log lines join it), ends when the work settles, and is marked as
 * an error when the work throws. With tracing off, the tracer is OpenTelemetry's no-op one. (Not
 * workflow code: nothing the workflow imports imports this file.)
 */
import { context, SpanStatusCode, trace, type Context, type Span, type SpanOptions } from '@opentelemetry/api';

/** The instrumentation scope of every span homeostat records. */
export const tracerName = 'homeostat';

/** Runs `work` in a new span named `name`, child of `parent`. */
export async function inSpan<T>(
  name: string,
  options: SpanOptions,
  work: (span: Span) => Promise<T>,
  parent: Context = context.active(),
): Promise<T> {
  return trace.getTracer(tracerName).startActiveSpan(name, options, parent, async (span) => {
    try {
      return await work(span);
    } catch (err) {
      span.recordException(err instanceof Error ? err : String(err));
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** {@link inSpan} under the active span; without one (an untraced pass), `work` runs without a span of its own. */
export function inChildSpan<T>(name: string, options: SpanOptions, work: () => Promise<T>): Promise<T> {
  return trace.getActiveSpan() === undefined ? work() : inSpan(name, options, work);
}
