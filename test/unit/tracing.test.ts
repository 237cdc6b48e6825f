/**
 * Tracing's parts that need no stack (issue 30): the OTEL_* variables homeostat honours, the trace
 * context in Temporal headers, the workflow's derived span IDs, and trace IDs on pino lines — with the
 * real OpenTelemetry SDK (an in-memory exporter), not a mock.
 */
import { Writable } from 'node:stream';
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { defaultPayloadConverter } from '@temporalio/common';
import pino from 'pino';
import { traceLogFields } from '../../config/log-trace-fields';
import { resolveTracing, tracingOff } from '../../config/tracing';
import { traceContextOf, withActiveTraceContext } from '../../config/trace-headers';
import { derivedSpanId, formatTraceparent, parseTraceparent, traceHeader } from '../../core/trace-context';

const exporter = new InMemorySpanExporter();
beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }));
});
afterAll(() => {
  trace.disable();
  context.disable();
  propagation.disable();
});

function logLines(write: (log: pino.Logger) => void): Record<string, unknown>[] {
  let text = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      text += chunk.toString();
      done();
    },
  });
  write(pino({ mixin: traceLogFields }, sink));
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('trace ids on log lines', () => {
  it('given a span is active, each pino line carries its trace_id and span_id; outside any span, none', async () => {
    const tracer = trace.getTracer('test');
    let ids: { traceId: string; spanId: string } | undefined;
    const lines = logLines((log) => {
      log.info('before');
      tracer.startActiveSpan('work', (span) => {
        ids = span.spanContext();
        log.info({ ref: 'x' }, 'inside');
        span.end();
      });
      log.info('after');
    });
    expect(lines.map((l) => [l.msg, l.trace_id, l.span_id])).toEqual([
      ['before', undefined, undefined],
      ['inside', ids!.traceId, ids!.spanId],
      ['after', undefined, undefined],
    ]);
  });

  it('given an async step under a span, a line logged after an await still carries the span', async () => {
    const tracer = trace.getTracer('test');
    let text = '';
    const log = pino(
      { mixin: traceLogFields },
      new Writable({
        write(chunk: Buffer, _enc, done) {
          text += chunk.toString();
          done();
        },
      }),
    );
    const traceId = await tracer.startActiveSpan('async', async (span) => {
      await new Promise((r) => setTimeout(r, 1));
      log.info('later');
      span.end();
      return span.spanContext().traceId;
    });
    expect(JSON.parse(text.trim())).toMatchObject({ msg: 'later', trace_id: traceId });
  });
});

describe('the OTEL_* variables', () => {
  it('given none, tracing is off', () => {
    expect(resolveTracing({})).toEqual(tracingOff);
  });

  it('given OTEL_TRACES_EXPORTER=otlp and an endpoint, spans go to its /v1/traces with the headers, name and sampler given', () => {
    expect(
      resolveTracing({
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
        OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc,x-tenant=a',
        OTEL_SERVICE_NAME: 'ops',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
      }),
    ).toEqual({
      exporter: 'otlp',
      serviceName: 'ops',
      endpoint: 'http://collector:4318/v1/traces',
      headers: { authorization: 'Bearer abc', 'x-tenant': 'a' },
      resourceAttributes: { 'deployment.environment': 'prod' },
      sampler: 'parentbased_traceidratio',
      samplerRatio: 0.25,
    });
    expect(
      resolveTracing({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://x/custom' }),
    ).toMatchObject({ endpoint: 'https://x/custom' });
  });

  it('given OTEL_SDK_DISABLED=true, tracing is off whatever the exporter', () => {
    expect(resolveTracing({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' })).toMatchObject({
      exporter: 'none',
    });
  });

  it('given values it cannot honour, it names every one of them', () => {
    const result = resolveTracing({
      OTEL_TRACES_EXPORTER: 'zipkin',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_EXPORTER_OTLP_HEADERS: 'novalue',
      OTEL_TRACES_SAMPLER: 'sometimes',
      OTEL_TRACES_SAMPLER_ARG: '2',
    });
    expect('problems' in result && result.problems.map((p) => p.split(':')[0])).toEqual([
      'OTEL_TRACES_EXPORTER',
      'OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL',
      'OTEL_EXPORTER_OTLP_ENDPOINT',
      'OTEL_EXPORTER_OTLP_HEADERS',
      'OTEL_TRACES_SAMPLER',
      'OTEL_TRACES_SAMPLER_ARG',
    ]);
  });
});

describe('trace context in Temporal headers', () => {
  it('given an active span, the header carries it and reads back as its context; without one, nothing is added', () => {
    expect(withActiveTraceContext({})).toEqual({});
    const tracer = trace.getTracer('test');
    tracer.startActiveSpan('send', (span) => {
      const headers = withActiveTraceContext({});
      expect(Object.keys(headers)).toEqual([traceHeader]);
      const read = trace.getSpanContext(traceContextOf(headers)!);
      expect(read).toMatchObject({ traceId: span.spanContext().traceId, spanId: span.spanContext().spanId });
      span.end();
    });
  });

  it('given a header that is not a trace context, the activity runs untraced instead of failing', () => {
    expect(traceContextOf({ [traceHeader]: defaultPayloadConverter.toPayload({ traceparent: 'nonsense' }) })).toBe(
      undefined,
    );
    expect(
      traceContextOf({ [traceHeader]: { metadata: { encoding: new Uint8Array([1]) }, data: new Uint8Array() } }),
    ).toBe(undefined);
    expect(traceContextOf(undefined)).toBeUndefined();
  });

  it('given traceparents, only version 00 with non-zero IDs is accepted, and formatting round-trips', () => {
    const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    expect(formatTraceparent(parseTraceparent(tp)!)).toBe(tp);
    expect(parseTraceparent('00-00000000000000000000000000000000-b7ad6b7169203331-01')).toBeUndefined();
    expect(parseTraceparent('01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01')).toBeUndefined();
    expect(parseTraceparent(42)).toBeUndefined();
    expect(parseTraceparent(tp.replace(/-01$/, '-00'))).toMatchObject({ sampled: false });
  });

  it('given a run and a pass, the pass span ID is the same on every replay and differs between passes and runs', () => {
    const id = derivedSpanId('run-1', '3');
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    expect(derivedSpanId('run-1', '3')).toBe(id);
    expect(new Set([id, derivedSpanId('run-1', '4'), derivedSpanId('run-2', '3')]).size).toBe(3);
  });
});
