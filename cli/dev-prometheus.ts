/**
 * The demo's Prometheus (`homeostat dev`, issue 30): scrapes the worker, the bridge, the API and the
 * Temporal dev server, and evaluates homeostat's alerting rules (`deploy/monitoring/`), so the
 * dashboard's queries and the alerts can be tried on a running demo.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type RunningPrometheus, type ScrapeTarget, startPrometheus } from '../devstack/components/prometheus';
import { packageRoot } from '../devstack/paths';
import type { Progress } from '../devstack/binaries';

/** homeostat's Prometheus alerting rules, as shipped in `deploy/monitoring/`. */
export const alertRulesFile = join(packageRoot, 'deploy', 'monitoring', 'homeostat-alerts.yaml');

/** homeostat's Grafana dashboard, as shipped in `deploy/monitoring/`. */
export const dashboardFile = join(packageRoot, 'deploy', 'monitoring', 'homeostat-dashboard.json');

/** Where the demo's processes serve their metrics. */
export interface DemoMetricsEndpoints {
  readonly workerPort: number;
  readonly bridgePort: number;
  /** The API's base URL (HTTPS). */
  readonly api: string;
  /** The CA that signed the API's certificate. */
  readonly apiCaFile: string;
  /** The Temporal dev server's metrics URL. */
  readonly temporalMetricsUrl: string;
}

/** The scrape targets of the demo's processes, each a job of its own (`worker`, `bridge`, `api`, `temporal`). */
export function demoScrapeTargets(e: DemoMetricsEndpoints): ScrapeTarget[] {
  return [
    { job: 'worker', url: `http://127.0.0.1:${e.workerPort}/metrics` },
    { job: 'bridge', url: `http://127.0.0.1:${e.bridgePort}/metrics` },
    { job: 'api', url: `${e.api}/metrics`, caFile: e.apiCaFile },
    { job: 'temporal', url: e.temporalMetricsUrl },
  ];
}

/** Starts the demo's Prometheus in `<stack folder>/prometheus`, with the alerting rules when they are at hand. */
export function startDemoPrometheus(
  stackDir: string,
  endpoints: DemoMetricsEndpoints,
  progress?: Progress,
): Promise<RunningPrometheus> {
  return startPrometheus({
    dir: join(stackDir, 'prometheus'),
    targets: demoScrapeTargets(endpoints),
    ruleFiles: existsSync(alertRulesFile) ? [alertRulesFile] : [],
    ...(progress ? { progress } : {}),
  });
}
