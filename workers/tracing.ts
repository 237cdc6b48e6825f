/**
 * The worker's half of a pass's trace (issue 30, docs/observability.md "Traces"): each activity of a
 * traced pass (observe, every step, status writes, the finalizer) is a span under the pass's span —
 * whose context the workflow put in the activity's header — with the object, the step and the pass
 * as attributes; the Kubernetes and other HTTP requests it makes are spans under it
 * (`config/http-client-spans.ts`). The pass span itself is reported by the workflow through the
 * `tracing` sink and recorded here with the ID the workflow derived for it.
 */
import { context, SpanKind, SpanStatusCode, trace, TraceFlags } from '@opentelemetry/api';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import { inSpan, tracerName } from '../core/in-span';
import { startSpanWithId } from '../config/span-ids';
import { traceCarrierOf, traceContextOf } from '../config/trace-headers';
import type { ObjectRef } from '../core/definitions';
import { objectAttributes, traceAttributes, type TraceAttributeValue, type TraceSinks } from '../core/trace-context';

/** The step an activity type runs (`<plural>.<group>/<step>`), or undefined for homeostat's own activities. */
export function stepOfActivityType(activityType: string): string | undefined {
  const at = activityType.lastIndexOf('/');
  return at >= 0 ? activityType.slice(at + 1) : undefined;
}

/** The attributes of an activity's span: the object and its generation (when the input names them), the step and the pass. */
function activityAttributes(activityType: string, input: unknown, pass: unknown): Record<string, TraceAttributeValue> {
  const arg = (typeof input === 'object' && input !== null ? input : {}) as {
    ref?: ObjectRef;
    identity?: { generation?: unknown };
  };
  const step = stepOfActivityType(activityType);
  const generation = arg.identity?.generation;
  return {
    ...(arg.ref ? objectAttributes(arg.ref) : {}),
    ...(typeof generation === 'number' ? { [traceAttributes.generation]: generation } : {}),
    ...(step !== undefined ? { [traceAttributes.step]: step } : {}),
    ...(typeof pass === 'number' ? { [traceAttributes.pass]: pass } : {}),
    'homeostat.activity.type': activityType,
  };
}

/** The activity interceptor: a span per activity whose header carries a trace context; others run as they are. */
export const activityTracing: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    execute: (input, next) => {
      const parent = traceContextOf(input.headers);
      if (!parent) return next(input);
      const { activityType, attempt, isLocal } = ctx.info;
      return inSpan(
        `activity ${activityType}`,
        {
          kind: SpanKind.INTERNAL,
          attributes: {
            ...activityAttributes(activityType, input.args[0], traceCarrierOf(input.headers)?.pass),
            'homeostat.activity.attempt': attempt,
            'homeostat.activity.local': isLocal,
          },
        },
        () => next(input),
        parent,
      );
    },
  },
});

/** The `tracing` sink: records each finished pass the workflow reports as a span with the workflow's IDs. */
export const tracingSinks: InjectedSinks<TraceSinks> = {
  tracing: {
    passEnded: {
      fn: (info, span) => {
        const parent = trace.setSpanContext(context.active(), {
          traceId: span.traceId,
          spanId: span.parentSpanId,
          traceFlags: TraceFlags.SAMPLED,
          isRemote: true,
        });
        const recorded = startSpanWithId(
          trace.getTracer(tracerName),
          span.spanId,
          span.name,
          {
            kind: SpanKind.INTERNAL,
            startTime: span.startMs,
            attributes: {
              ...span.attributes,
              'homeostat.workflow.id': info.workflowId,
              'homeostat.run.id': info.runId,
            },
          },
          parent,
        );
        if (span.error !== undefined) recorded.setStatus({ code: SpanStatusCode.ERROR, message: span.error });
        recorded.end(span.endMs);
      },
      callDuringReplay: false,
    },
  },
};
