/**
 * A Jaeger v2 for a local stack (issue 30): receives OTLP/HTTP spans, keeps them in memory and serves
 * Jaeger's query API (`/api/traces`, `/api/services`). Not one of a stack's components: most test runs
 * need no trace backend, so only what reads traces (`homeostat dev`, the tracing test) builds and
 * starts one. Built without Jaeger UI's assets (the Go module holds none): its pages show Jaeger's
 * placeholder, its API answers.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureBinary, goServers, type Progress } from '../binaries';
import { freePorts, type ManagedProcess, startProcess, stopProcess, waitUntil } from '../processes';
import { httpOk } from './http-probes';

/** Options of {@link startJaeger}. */
export interface JaegerOptions {
  /** The folder of its configuration and log (created). */
  readonly dir: string;
  /** Build progress (the first start builds Jaeger from its Go module, minutes; cached afterwards). @default silent */
  readonly progress?: Progress;
  /**
   * Its ports, chosen beforehand ({@link jaegerPorts}) so that exporters can be pointed at it before it
   * runs (its first start waits for the build). @default free ports chosen at start
   */
  readonly ports?: JaegerPorts;
}

/** A running Jaeger. */
export interface RunningJaeger {
  /** Its query API's (and UI's) base URL, `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Where OTLP/HTTP exporters send: `http://127.0.0.1:<port>` (OTEL_EXPORTER_OTLP_ENDPOINT). */
  readonly otlpEndpoint: string;
  readonly process: ManagedProcess;
  /** Stops it (its traces are gone: memory storage). */
  stop(): Promise<void>;
}

/** The ports Jaeger listens on, all on 127.0.0.1. */
export interface JaegerPorts {
  readonly query: number;
  readonly queryGrpc: number;
  readonly otlpHttp: number;
  readonly health: number;
}

/** Four free loopback ports for a Jaeger. */
export async function jaegerPorts(): Promise<JaegerPorts> {
  const [query, queryGrpc, otlpHttp, health] = (await freePorts(4)) as [number, number, number, number];
  return { query, queryGrpc, otlpHttp, health };
}

/** The base URL OTLP/HTTP exporters send to (OTEL_EXPORTER_OTLP_ENDPOINT) for Jaeger on `ports`. */
export function otlpEndpointOf(ports: JaegerPorts): string {
  return `http://127.0.0.1:${ports.otlpHttp}`;
}

/**
 * Jaeger's configuration (an OpenTelemetry Collector configuration; YAML is a superset of JSON):
 * the OTLP/HTTP receiver, memory storage, the query extension, no telemetry endpoint of its own.
 */
export function jaegerConfig(ports: JaegerPorts): object {
  const at = (port: number): string => `127.0.0.1:${port}`;
  return {
    service: {
      extensions: ['jaeger_storage', 'jaeger_query', 'healthcheckv2'],
      pipelines: {
        traces: { receivers: ['otlp'], processors: ['batch'], exporters: ['jaeger_storage_exporter'] },
      },
      telemetry: { metrics: { level: 'none' }, traces: { level: 'none' }, logs: { level: 'warn' } },
    },
    extensions: {
      jaeger_storage: { backends: { memstore: { memory: { max_traces: 100_000 } } } },
      jaeger_query: {
        storage: { traces: 'memstore' },
        enable_tracing: false, // its own spans would go to localhost:4317
        http: { endpoint: at(ports.query) },
        grpc: { endpoint: at(ports.queryGrpc) },
      },
      healthcheckv2: { use_v2: true, http: { endpoint: at(ports.health) } },
    },
    receivers: { otlp: { protocols: { http: { endpoint: at(ports.otlpHttp) } } } },
    processors: { batch: { timeout: '200ms' } },
    exporters: { jaeger_storage_exporter: { trace_storage: 'memstore' } },
  };
}

/** Builds Jaeger if needed, starts it on free loopback ports and waits until its query API answers. */
export async function startJaeger(options: JaegerOptions): Promise<RunningJaeger> {
  const server = goServers.find((s) => s.name === 'jaeger')!;
  const executable = await ensureBinary(server, options.progress);
  mkdirSync(options.dir, { recursive: true, mode: 0o700 });
  const ports = options.ports ?? (await jaegerPorts());
  const configFile = join(options.dir, 'jaeger.yaml');
  writeFileSync(configFile, JSON.stringify(jaegerConfig(ports), null, 2), { mode: 0o600 });
  const url = `http://127.0.0.1:${ports.query}`;
  const proc = startProcess({
    name: 'jaeger',
    executable,
    args: ['--config', configFile],
    logFile: join(options.dir, 'jaeger.log'),
    cwd: options.dir,
  });
  const stop = () => stopProcess(proc, 'SIGTERM');
  try {
    await waitUntil('Jaeger', () => httpOk(`${url}/api/services`), { timeoutMs: 60_000, proc });
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
  return { url, otlpEndpoint: otlpEndpointOf(ports), process: proc, stop };
}
