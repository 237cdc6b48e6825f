/**
 * The trace context across Temporal, outside workflow code: a client interceptor that puts the active
 * span's context into the `_tracer-data` header of what a client sends (the bridge's start and
 * `signalWithStart`, the API's updates and update-with-start), and reading it back from an activity's
 * headers. Without an active span (tracing off, or a call outside any span) nothing is added.
 */
import { context, propagation, trace, type Context } from '@opentelemetry/api';
import { defaultPayloadConverter, type Headers } from '@temporalio/common';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import { traceHeader, type TraceCarrier } from '../core/trace-context';

/** `headers` with the active span's context added, or `headers` itself when no span is active. */
export function withActiveTraceContext(headers: Headers): Headers {
  const active = context.active();
  if (trace.getSpan(active) === undefined) return headers;
  const carrier: Record<string, string> = {};
  propagation.inject(active, carrier);
  if (carrier.traceparent === undefined) return headers;
  const value: TraceCarrier = { traceparent: carrier.traceparent };
  return { ...headers, [traceHeader]: defaultPayloadConverter.toPayload(value) };
}

/** The carrier of `headers`' trace context, if it has a readable one. */
export function traceCarrierOf(headers: Headers | undefined): Partial<TraceCarrier> | undefined {
  const payload = headers?.[traceHeader];
  if (payload === undefined) return undefined;
  try {
    return defaultPayloadConverter.fromPayload<Partial<TraceCarrier>>(payload) ?? undefined;
  } catch {
    return undefined;
  }
}

/** The context `headers` carry (a remote parent), or undefined. */
export function traceContextOf(headers: Headers | undefined): Context | undefined {
  const carrier = traceCarrierOf(headers);
  if (typeof carrier?.traceparent !== 'string') return undefined;
  const extracted = propagation.extract(context.active(), { traceparent: carrier.traceparent });
  return trace.getSpan(extracted) === undefined ? undefined : extracted;
}

/** A workflow-client interceptor adding the active trace context to starts, signals and updates. */
export const traceContextClientInterceptor: WorkflowClientInterceptor = {
  startWithDetails: (input, next) => next({ ...input, headers: withActiveTraceContext(input.headers) }),
  signal: (input, next) => next({ ...input, headers: withActiveTraceContext(input.headers) }),
  signalWithStart: (input, next) => next({ ...input, headers: withActiveTraceContext(input.headers) }),
  startUpdate: (input, next) => next({ ...input, headers: withActiveTraceContext(input.headers) }),
  startUpdateWithStart: (input, next) =>
    next({
      ...input,
      workflowStartHeaders: withActiveTraceContext(input.workflowStartHeaders),
      updateHeaders: withActiveTraceContext(input.updateHeaders),
    }),
};
