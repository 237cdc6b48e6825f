/** Reading a real Prometheus's HTTP API: queries, targets, rules and alerts (issue 30's tests). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const monitoring = join(__dirname, '../../deploy/monitoring');

/** One series of an instant query's answer. */
export interface PromSample {
  readonly metric: Record<string, string>;
  readonly value: [number, string];
}

async function api<T>(prometheus: string, path: string): Promise<T> {
  const res = await fetch(`${prometheus}${path}`, { signal: AbortSignal.timeout(10_000) });
  const body = (await res.json()) as { status: string; data: T; error?: string };
  if (body.status !== 'success') throw new Error(`${path}: ${body.error ?? res.status}`);
  return body.data;
}

/** The instant vector of `expr` now; throws when Prometheus refuses the query. */
export async function promQuery(prometheus: string, expr: string): Promise<PromSample[]> {
  const data = await api<{ resultType: string; result: PromSample[] }>(
    prometheus,
    `/api/v1/query?query=${encodeURIComponent(expr)}`,
  );
  return data.result;
}

/** The scrape targets' job and health (`up`, `down`, `unknown`). */
export async function promTargets(prometheus: string): Promise<{ job: string; health: string; lastError: string }[]> {
  const data = await api<{ activeTargets: { labels: { job: string }; health: string; lastError: string }[] }>(
    prometheus,
    '/api/v1/targets',
  );
  return data.activeTargets.map((t) => ({ job: t.labels.job, health: t.health, lastError: t.lastError }));
}

/** The alerting rules Prometheus loaded: name, health (`ok` once evaluated without error), state. */
export async function promRules(
  prometheus: string,
): Promise<{ group: string; name: string; health: string; state: string; lastError?: string }[]> {
  const data = await api<{
    groups: { name: string; rules: { name: string; health: string; state: string; lastError?: string }[] }[];
  }>(prometheus, '/api/v1/rules?type=alert');
  return data.groups.flatMap((g) => g.rules.map((r) => ({ group: g.name, ...r })));
}

/** Every query of the shipped Grafana dashboard, with its panel's title. */
export function dashboardQueries(): { panel: string; expr: string }[] {
  const dashboard = JSON.parse(readFileSync(join(monitoring, 'homeostat-dashboard.json'), 'utf8')) as {
    panels: { title: string; targets: { expr: string }[] }[];
  };
  return dashboard.panels.flatMap((p) => p.targets.map((t) => ({ panel: p.title, expr: t.expr })));
}

/** The alert names of the shipped rules file, in order (read with a regexp: the test needs no YAML parser). */
export function shippedAlertNames(): string[] {
  const text = readFileSync(join(monitoring, 'homeostat-alerts.yaml'), 'utf8');
  return [...text.matchAll(/^\s+- alert: (\S+)$/gm)].map((m) => m[1]!);
}
