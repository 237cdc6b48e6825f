/**
 * The demo's Jaeger (`homeostat dev`, issue 30): the worker, the bridge and the API export their spans
 * to it through the standard OTEL_* variables, and the demo prints where to find the examples' traces.
 * Its ports are chosen before the processes start, so they export to it while its first start still
 * builds it (spans sent before it listens are dropped by the exporter).
 */
import { join } from 'node:path';
import type { Progress } from '../devstack/binaries';
import {
  type JaegerPorts,
  jaegerPorts,
  otlpEndpointOf,
  type RunningJaeger,
  startJaeger,
} from '../devstack/components/jaeger';

/** The demo's Jaeger, not yet started, and the environment that points the processes at it. */
export interface DemoJaeger {
  readonly ports: JaegerPorts;
  /** OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_EXPORTER_OTLP_PROTOCOL for the processes. */
  readonly env: Readonly<Record<string, string>>;
  /** Builds (first time) and starts it in `<stack folder>/jaeger`. */
  start(progress?: Progress): Promise<RunningJaeger>;
}

/** Chooses the demo Jaeger's ports. */
export async function demoJaeger(stackDir: string): Promise<DemoJaeger> {
  const ports = await jaegerPorts();
  return {
    ports,
    env: {
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpointOf(ports),
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    },
    start: (progress) => startJaeger({ dir: join(stackDir, 'jaeger'), ports, ...(progress ? { progress } : {}) }),
  };
}

/**
 * Where the traces of an object's passes are: Jaeger's search (its UI page; built without the UI's
 * assets, see devstack/components/jaeger.ts) and the same search through its query API, by the
 * bridge's service (the root of a watch event's trace) and the object's namespace and name.
 */
export function traceLinks(
  jaegerUrl: string,
  object?: { readonly namespace?: string; readonly name: string },
): { ui: string; api: string } {
  const tags = object && {
    'homeostat.object.name': object.name,
    ...(object.namespace ? { 'homeostat.object.namespace': object.namespace } : {}),
  };
  const query = new URLSearchParams({
    service: 'homeostat-bridge',
    ...(tags ? { tags: JSON.stringify(tags) } : {}),
  }).toString();
  return { ui: `${jaegerUrl}/search?${query}`, api: `${jaegerUrl}/api/traces?${query}` };
}
