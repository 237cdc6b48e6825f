/**
 * Trace context as it travels through Temporal (issue 30, docs/observability.md "Traces"): a W3C
 * `traceparent` in a Temporal header — of the bridge's signal, of the API's update, of each activity a
 * traced pass schedules — and the pass span the workflow reports through a sink. Plain data and pure
 * functions: the workflow imports this file, so nothing here draws randomness or reads the clock.
 */
import type { Sinks } from '@temporalio/workflow';
import type { ObjectRef } from './definitions';

/**
 * The Temporal header that carries the context: the key and the shape (`{ traceparent }`, through the
 * default payload converter) of Temporal's own OpenTelemetry interceptors, so a caller traced by them
 * is honoured too.
 */
export const traceHeader = '_tracer-data';

/** What {@link traceHeader} holds. */
export interface TraceCarrier {
  /** `00-<32 hex trace id>-<16 hex span id>-<2 hex flags>`. */
  readonly traceparent: string;
  /** The pass an activity runs for (set by the workflow on the activities of a traced pass). */
  readonly pass?: number;
}

/** A parsed `traceparent`. */
export interface TraceParent {
  readonly traceId: string;
  readonly spanId: string;
  /** Bit 0 of the flags: the caller records this trace. */
  readonly sampled: boolean;
}

const traceparentPattern = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** Parses a version-00 `traceparent`; undefined for anything else (an all-zero ID included). */
export function parseTraceparent(value: unknown): TraceParent | undefined {
  if (typeof value !== 'string') return undefined;
  const m = traceparentPattern.exec(value);
  if (!m || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return undefined;
  return { traceId: m[1]!, spanId: m[2]!, sampled: (parseInt(m[3]!, 16) & 1) === 1 };
}

/** Formats a `traceparent` (version 00). */
export function formatTraceparent(t: TraceParent): string {
  return `00-${t.traceId}-${t.spanId}-${t.sampled ? '01' : '00'}`;
}

/** 32-bit FNV-1a of `text` starting from `seed`. */
function fnv1a(text: string, seed: number): number {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * A span ID derived from `parts` (a run ID and a pass number): the same on every replay without drawing
 * from the workflow's seeded `Math.random` (which would shift every later draw, the drift jitter's too).
 */
export function derivedSpanId(...parts: readonly string[]): string {
  const text = parts.join('\u0000');
  const hex = (n: number): string => n.toString(16).padStart(8, '0');
  const id = hex(fnv1a(text, 0x811c9dc5)) + hex(fnv1a(text, 0x01000193 ^ 0x5bd1e995));
  return /^0+$/.test(id) ? '0000000000000001' : id;
}

/** Span attribute names (one set for the bridge's, the pass's and the activities' spans). */
export const traceAttributes = {
  group: 'homeostat.object.group',
  kind: 'homeostat.object.kind',
  namespace: 'homeostat.object.namespace',
  name: 'homeostat.object.name',
  generation: 'homeostat.object.generation',
  pass: 'homeostat.pass',
  step: 'homeostat.step',
  result: 'homeostat.pass.result',
  trigger: 'homeostat.pass.trigger',
} as const;

/** A span attribute value. */
export type TraceAttributeValue = string | number | boolean;

/** The object attributes of a reference (`''` for the core group and a cluster-scoped object's namespace). */
export function objectAttributes(ref: ObjectRef): Record<string, TraceAttributeValue> {
  return {
    [traceAttributes.group]: ref.group,
    [traceAttributes.kind]: ref.kind,
    [traceAttributes.namespace]: ref.namespace ?? '',
    [traceAttributes.name]: ref.name,
  };
}

/** A finished pass, as the workflow reports it: the worker turns it into a span with these IDs. */
export interface PassSpan {
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  /** The span that caused the pass (the bridge's signal, the API's request). */
  readonly parentSpanId: string;
  /** Workflow time, ms since the epoch. */
  readonly startMs: number;
  readonly endMs: number;
  readonly attributes: Readonly<Record<string, TraceAttributeValue>>;
  /** Set when the pass ended Degraded or Invalid. */
  readonly error?: string;
}

/** The workflow's sink for finished passes (not called on replay: a pass is reported once). */
export interface TraceSinks extends Sinks {
  readonly tracing: {
    passEnded(span: PassSpan): void;
  };
}
