/**
 * A Prometheus server for a local stack (issue 30): scrapes the processes it is given (the demo's
 * worker, bridge and API, the Temporal dev server's metrics port) every couple of seconds and loads
 * alerting rules. Not one of a stack's components: its targets are processes started after the stack
 * (their ports are known only then), and most test runs need no Prometheus, so only what needs it
 * (`homeostat dev`, the metrics tests) builds and starts one.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureBinary, goServers, type Progress } from '../binaries';
import { freePorts, type ManagedProcess, startProcess, stopProcess, waitUntil } from '../processes';
import { httpOk } from './http-probes';

/** One scrape job: a process's `/metrics`. */
export interface ScrapeTarget {
  /** The job label (`worker`, `bridge`, `api`, `temporal`). */
  readonly job: string;
  /** The full URL of the metrics endpoint, `http(s)://host:port/path`. */
  readonly url: string;
  /** For an `https` URL: the CA file its certificate is checked against. @default the system's CAs */
  readonly caFile?: string;
}

/** Options of {@link startPrometheus}. */
export interface PrometheusOptions {
  /** The folder of its configuration, data and log (created). */
  readonly dir: string;
  readonly targets: readonly ScrapeTarget[];
  /** Alerting rule files to load (Prometheus's rule file format). @default none */
  readonly ruleFiles?: readonly string[];
  /** Scrape and rule evaluation interval, in seconds: short, so a demo's minutes show as many points. @default 2 */
  readonly intervalSeconds?: number;
  /** Build progress (the first start builds Prometheus from its Go module, minutes; cached afterwards). @default silent */
  readonly progress?: Progress;
}

/** A running Prometheus. */
export interface RunningPrometheus {
  /** Its HTTP API's base URL, `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly process: ManagedProcess;
  /** Stops it (its data stays in its folder). */
  stop(): Promise<void>;
}

/** The Prometheus configuration (YAML is a superset of JSON: written as JSON). */
export function prometheusConfig(options: PrometheusOptions): object {
  const interval = `${options.intervalSeconds ?? 2}s`;
  return {
    global: { scrape_interval: interval, evaluation_interval: interval, scrape_timeout: interval },
    rule_files: options.ruleFiles ?? [],
    scrape_configs: options.targets.map((t) => {
      const url = new URL(t.url);
      return {
        job_name: t.job,
        scheme: url.protocol.replace(':', ''),
        metrics_path: url.pathname,
        ...(t.caFile ? { tls_config: { ca_file: t.caFile } } : {}),
        static_configs: [{ targets: [url.host] }],
      };
    }),
  };
}

/** Builds Prometheus if needed, starts it on a free loopback port and waits until it is ready. */
export async function startPrometheus(options: PrometheusOptions): Promise<RunningPrometheus> {
  const server = goServers.find((s) => s.name === 'prometheus')!;
  const executable = await ensureBinary(server, options.progress);
  mkdirSync(join(options.dir, 'data'), { recursive: true, mode: 0o700 });
  const configFile = join(options.dir, 'prometheus.yml');
  writeFileSync(configFile, JSON.stringify(prometheusConfig(options), null, 2), { mode: 0o600 });
  const [port] = await freePorts(1);
  const url = `http://127.0.0.1:${port}`;
  const proc = startProcess({
    name: 'prometheus',
    executable,
    args: [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${join(options.dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    logFile: join(options.dir, 'prometheus.log'),
    cwd: options.dir,
  });
  const stop = () => stopProcess(proc, 'SIGTERM');
  try {
    await waitUntil('Prometheus', () => httpOk(`${url}/-/ready`), { timeoutMs: 60_000, proc });
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
  return { url, process: proc, stop };
}
