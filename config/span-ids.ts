/**
 * Spans with IDs chosen elsewhere: the object workflow derives its pass span's ID deterministically
 * (`workflows/pass-trace.ts`) and the worker records that span with that ID, so the activities the
 * pass scheduled (whose header already names it as parent) hang under it. The tracer provider's ID
 * generator hands out a preset span ID once, random IDs otherwise.
 */
import type { Context, Span, SpanOptions, Tracer } from '@opentelemetry/api';

/** What OpenTelemetry's `IdGenerator` is. */
export interface SpanIdSource {
  generateTraceId(): string;
  generateSpanId(): string;
}

let preset: string | undefined;

/** The tracer provider's ID generator: `random`'s IDs, except a span ID preset by {@link startSpanWithId}. */
export class PresettableIdGenerator implements SpanIdSource {
  constructor(private readonly random: SpanIdSource) {}

  generateTraceId(): string {
    return this.random.generateTraceId();
  }

  generateSpanId(): string {
    const id = preset;
    preset = undefined;
    return id ?? this.random.generateSpanId();
  }
}

/**
 * Starts a span whose ID is `spanId` (16 hex digits) — when the registered provider uses a
 * {@link PresettableIdGenerator}; with another provider, or none, the span gets an ID of its own.
 */
export function startSpanWithId(
  tracer: Tracer,
  spanId: string,
  name: string,
  options: SpanOptions,
  parent: Context,
): Span {
  preset = spanId;
  try {
    return tracer.startSpan(name, options, parent);
  } finally {
    preset = undefined;
  }
}
