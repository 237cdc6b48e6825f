/**
 * The OpenTelemetry SDK of a process whose tracing is on, loaded by `startTracing` only then: a tracer
 * provider with the configured sampler and a batching exporter (OTLP/HTTP JSON, or the console), the
 * async-hooks context manager, the W3C trace-context propagator, and client spans of outgoing HTTP
 * requests and of `pg` statements.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  ParentBasedSampler,
  RandomIdGenerator,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
} from '@opentelemetry/sdk-trace';
import { recordHttpClientSpans } from './http-client-spans';
import { recordPgSpans } from './pg-client-spans';
import { PresettableIdGenerator } from './span-ids';
import type { TracingSettings } from './tracing';

function samplerOf(settings: TracingSettings): Sampler {
  const root = settings.sampler.endsWith('always_off')
    ? new AlwaysOffSampler()
    : settings.sampler.endsWith('traceidratio')
      ? new TraceIdRatioBasedSampler(settings.samplerRatio)
      : new AlwaysOnSampler();
  return settings.sampler.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root;
}

/** Registers the SDK globally for this process; returns the function that flushes and stops it. */
export function startTracingSdk(settings: TracingSettings, defaultServiceName: string): { shutdown(): Promise<void> } {
  const exporter =
    settings.exporter === 'console'
      ? new ConsoleSpanExporter()
      : new OTLPTraceExporter({ url: settings.endpoint, headers: { ...settings.headers } });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      ...settings.resourceAttributes,
      'service.name': settings.serviceName ?? settings.resourceAttributes['service.name'] ?? defaultServiceName,
    }),
    sampler: samplerOf(settings),
    idGenerator: new PresettableIdGenerator(new RandomIdGenerator()),
    // Every second: a pass's spans show in the backend while one looks at the object.
    spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: 1000 })],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  const stopHttp = recordHttpClientSpans();
  const stopPg = recordPgSpans();
  return {
    shutdown: async () => {
      stopHttp();
      stopPg();
      await provider.shutdown();
    },
  };
}
