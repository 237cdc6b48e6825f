/**
 * Tracing's configuration (issue 30, docs/observability.md "Traces"): the standard OpenTelemetry
 * variables homeostat honours, parsed once with the process's other configuration. Off unless
 * OTEL_TRACES_EXPORTER says `otlp` or `console`: then {@link startTracing} loads the OpenTelemetry SDK
 * (`tracing-sdk.ts`); off, nothing of it is loaded and no span is recorded.
 */
import type * as TracingSdk from './tracing-sdk';

/** Tracing settings of a process. */
export interface TracingSettings {
  /** `none`: tracing is off. `otlp`: spans go to an OTLP/HTTP (JSON) endpoint; `console`: to stdout. */
  readonly exporter: 'none' | 'otlp' | 'console';
  /** OTEL_SERVICE_NAME. @default the process's own (`homeostat-worker`, `homeostat-bridge`, `homeostat-api`, `homeostat`) */
  readonly serviceName?: string;
  /** The traces URL: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`. @default http://localhost:4318/v1/traces */
  readonly endpoint: string;
  /** OTEL_EXPORTER_OTLP_TRACES_HEADERS over OTEL_EXPORTER_OTLP_HEADERS (`key=value,…`, values URL-encoded). */
  readonly headers: Readonly<Record<string, string>>;
  /** OTEL_RESOURCE_ATTRIBUTES (`key=value,…`). */
  readonly resourceAttributes: Readonly<Record<string, string>>;
  /** OTEL_TRACES_SAMPLER. @default 'parentbased_always_on' */
  readonly sampler: (typeof samplers)[number];
  /** OTEL_TRACES_SAMPLER_ARG for the ratio samplers. @default 1 */
  readonly samplerRatio: number;
}

const samplers = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

/** Tracing off: what an environment without OTEL_TRACES_EXPORTER resolves to. */
export const tracingOff: TracingSettings = Object.freeze({
  exporter: 'none',
  endpoint: 'http://localhost:4318/v1/traces',
  headers: {},
  resourceAttributes: {},
  sampler: 'parentbased_always_on',
  samplerRatio: 1,
});

/** `key=value,…` with URL-encoded values (the W3C Baggage-like format of the OTEL_*_HEADERS and attributes variables). */
function keyValues(name: string, value: string | undefined, problems: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  if (value === undefined || value.trim() === '') return out;
  for (const part of value.split(',')) {
    const at = part.indexOf('=');
    const key = at > 0 ? part.slice(0, at).trim() : '';
    if (!key) {
      problems.push(`${name}: expected key=value pairs separated by commas, got "${part}"`);
      continue;
    }
    try {
      out[key] = decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      problems.push(`${name}: the value of ${key} is not URL-encoded correctly`);
    }
  }
  return out;
}

function url(name: string, value: string, problems: string[]): string {
  try {
    const u = new URL(value);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    problems.push(`${name}: expected an http(s) URL, got "${value}"`);
  }
  return value;
}

/**
 * Resolves the tracing settings from `env`; returns every problem found instead of throwing, so they
 * are reported with the process's other configuration problems. Honoured: OTEL_SDK_DISABLED,
 * OTEL_TRACES_EXPORTER, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT,
 * OTEL_EXPORTER_OTLP_(TRACES_)HEADERS, OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL (`http/json` only),
 * OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG.
 */
export function resolveTracing(env: Record<string, string | undefined>): TracingSettings | { problems: string[] } {
  const problems: string[] = [];
  const exporter = (env.OTEL_TRACES_EXPORTER ?? 'none').trim().toLowerCase() || 'none';
  if (exporter !== 'none' && exporter !== 'otlp' && exporter !== 'console') {
    problems.push(`OTEL_TRACES_EXPORTER: expected otlp, console or none, got "${env.OTEL_TRACES_EXPORTER}"`);
  }
  const disabled = env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true';
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL;
  if (protocol !== undefined && protocol !== 'http/json') {
    problems.push(`OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL: homeostat exports http/json only, got "${protocol}"`);
  }
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const endpoint =
    traces !== undefined
      ? url('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', traces, problems)
      : base !== undefined
        ? `${url('OTEL_EXPORTER_OTLP_ENDPOINT', base, problems).replace(/\/+$/, '')}/v1/traces`
        : tracingOff.endpoint;
  const headers = {
    ...keyValues('OTEL_EXPORTER_OTLP_HEADERS', env.OTEL_EXPORTER_OTLP_HEADERS, problems),
    ...keyValues('OTEL_EXPORTER_OTLP_TRACES_HEADERS', env.OTEL_EXPORTER_OTLP_TRACES_HEADERS, problems),
  };
  const resourceAttributes = keyValues('OTEL_RESOURCE_ATTRIBUTES', env.OTEL_RESOURCE_ATTRIBUTES, problems);
  const sampler = (env.OTEL_TRACES_SAMPLER ?? tracingOff.sampler).trim().toLowerCase();
  if (!(samplers as readonly string[]).includes(sampler)) {
    problems.push(`OTEL_TRACES_SAMPLER: expected one of ${samplers.join(', ')}, got "${env.OTEL_TRACES_SAMPLER}"`);
  }
  const ratio = env.OTEL_TRACES_SAMPLER_ARG === undefined ? 1 : Number(env.OTEL_TRACES_SAMPLER_ARG);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) {
    problems.push(`OTEL_TRACES_SAMPLER_ARG: expected a ratio from 0 to 1, got "${env.OTEL_TRACES_SAMPLER_ARG}"`);
  }
  const serviceName = env.OTEL_SERVICE_NAME?.trim();
  if (problems.length > 0) return { problems };
  return Object.freeze({
    exporter: disabled ? 'none' : (exporter as TracingSettings['exporter']),
    ...(serviceName ? { serviceName } : {}),
    endpoint,
    headers,
    resourceAttributes,
    sampler: sampler as TracingSettings['sampler'],
    samplerRatio: ratio,
  });
}

let started: Promise<{ shutdown(): Promise<void> }> | undefined;

/**
 * Starts tracing for this process when `settings` turn it on (once per process: later calls share the
 * first): loads the OpenTelemetry SDK, registers its tracer provider, context manager and propagator,
 * and records outgoing HTTP requests made under a span (`http-client-spans.ts`). Returns the function
 * that flushes and stops it (nothing to do when off).
 */
export async function startTracing(
  settings: TracingSettings,
  defaultServiceName: string,
): Promise<{ shutdown(): Promise<void> }> {
  if (settings.exporter === 'none') return { shutdown: async () => {} };
  if (!started) {
    // Loaded here and only here: a process with tracing off never loads the SDK.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const sdk = require('./tracing-sdk') as typeof TracingSdk;
    started = Promise.resolve(sdk.startTracingSdk(settings, defaultServiceName));
  }
  return started;
}
