/**
 * One trace per pass (issue 30): the workflow interceptors that read the trace context of the request
 * that woke the workflow (the bridge's `reconcile-requested` signal, the API's `reconcile-now` update,
 * the start that carried the first request) and put the running pass's context on every activity it
 * schedules; and the pass span, reported through a sink when the pass ends.
 *
 * Deterministic: the context comes from headers recorded in history, the pass's span ID is derived from
 * the run ID and the pass number (no `Math.random`), the sink is not called on replay, and headers are
 * not commands — so traced and untraced workers replay each other's histories. A pass with no traced
 * request behind it (a timer's, an untraced caller's) schedules its activities without a header.
 */
import {
  defaultPayloadConverter,
  proxySinks,
  workflowInfo,
  type Headers,
  type WorkflowInterceptorsFactory,
} from '@temporalio/workflow';
import { reconcileNowUpdate, reconcileRequestedSignal, type ObjectRef } from '../core/definitions';
import {
  derivedSpanId,
  formatTraceparent,
  objectAttributes,
  parseTraceparent,
  traceAttributes,
  traceHeader,
  type TraceCarrier,
  type TraceParent,
  type TraceSinks,
} from '../core/trace-context';

/** The newest traced request not yet served by a pass (a later request replaces it, as requests merge). */
let incoming: TraceParent | undefined;
/** The running pass's span, when a traced request caused it. */
let current: (TraceParent & { parentSpanId: string; startMs: number; pass: number }) | undefined;

function contextOf(headers: Headers): TraceParent | undefined {
  const payload = headers[traceHeader];
  if (payload === undefined) return undefined;
  try {
    return parseTraceparent(defaultPayloadConverter.fromPayload<Partial<TraceCarrier>>(payload)?.traceparent);
  } catch {
    return undefined; // not ours to refuse: an unreadable header only means no trace
  }
}

function note(headers: Headers): void {
  const context = contextOf(headers);
  if (context) incoming = context;
}

function withPassContext<T extends { headers: Headers }>(input: T): T {
  if (!current) return input;
  const carrier: TraceCarrier = { traceparent: formatTraceparent(current), pass: current.pass };
  return { ...input, headers: { ...input.headers, [traceHeader]: defaultPayloadConverter.toPayload(carrier) } };
}

/** The workflow interceptors (registered as a `workflowInterceptorModules` entry of the bundle). */
export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [
    {
      execute: (input, next) => {
        note(input.headers);
        return next(input);
      },
      handleSignal: (input, next) => {
        if (input.signalName === reconcileRequestedSignal.name) note(input.headers);
        return next(input);
      },
      handleUpdate: (input, next) => {
        if (input.name === reconcileNowUpdate.name) note(input.headers);
        return next(input);
      },
    },
  ],
  outbound: [
    {
      scheduleActivity: (input, next) => next(withPassContext(input)),
      scheduleLocalActivity: (input, next) => next(withPassContext(input)),
    },
  ],
});

/** A pass's span, from its start to {@link PassTrace.end}. */
export interface PassTrace {
  /** When the pass started (workflow time, ms since the epoch). */
  readonly startMs: number;
  /**
   * Reports the finished pass (nothing when no traced request caused it); returns the pass span's
   * `trace_id` and `span_id` for the pass's log line (none when untraced).
   */
  end(
    outcome: { readonly result: string; readonly generation: number },
    trigger: string | undefined,
  ): { trace_id?: string; span_id?: string };
}

/** Starts pass `pass` of `ref`'s workflow in the trace of the newest traced request, if there is one. */
export function startPassTrace(ref: ObjectRef, pass: number): PassTrace {
  const from = incoming;
  const startMs = Date.now();
  incoming = undefined;
  current = from && {
    traceId: from.traceId,
    spanId: derivedSpanId(workflowInfo().runId, String(pass)),
    sampled: from.sampled,
    parentSpanId: from.spanId,
    startMs,
    pass,
  };
  return {
    startMs,
    end(outcome, trigger) {
      const span = current;
      current = undefined;
      if (!span?.sampled) return {};
      const failed = outcome.result === 'degraded' || outcome.result === 'invalid';
      proxySinks<TraceSinks>().tracing.passEnded({
        name: `pass ${ref.kind}`,
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId,
        startMs: span.startMs,
        endMs: Date.now(),
        attributes: {
          ...objectAttributes(ref),
          [traceAttributes.pass]: pass,
          [traceAttributes.generation]: outcome.generation,
          [traceAttributes.result]: outcome.result,
          ...(trigger !== undefined ? { [traceAttributes.trigger]: trigger } : {}),
        },
        ...(failed ? { error: `pass ended ${outcome.result}` } : {}),
      });
      return { trace_id: span.traceId, span_id: span.spanId };
    },
  };
}
