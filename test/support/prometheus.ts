/** Reading a real Prometheus's HTTP API: queries, targets, rules and alerts (issue 30's tests). */
import { readFileSync, writeFileSync } from 'node:fs';
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

/** The state of each alerting rule Prometheus evaluates (`inactive`, `pending`, `firing`), by alert name. */
export async function alertStates(prometheus: string): Promise<Record<string, string>> {
  return Object.fromEntries((await promRules(prometheus)).map((r) => [r.name, r.state]));
}

/**
 * The shipped alerting rules with their clocks scaled down for a test of minutes, written to `file`:
 * every `for:` becomes `forSeconds`, every range window `[5m]`/`[1m]` becomes `windowSeconds`, and the
 * thresholds that are durations or rates (seconds not Ready, the action-rate limit) become `thresholds`.
 * The expressions, metric names, labels and comparisons stay the shipped ones. Each replacement must
 * find its text: a changed rules file fails the test loudly instead of testing something else.
 */
export function writeScaledAlertRules(
  file: string,
  scale: {
    forSeconds: number;
    windowSeconds: number;
    /** Replaces the Reconciling and Degraded not-Ready thresholds (seconds). */
    notReadySeconds: number;
    /** Replaces the Temporal action-rate limit (actions per second) the last rule compares against. */
    actionLimitPerSecond: number;
  },
): void {
  let text = readFileSync(join(monitoring, 'homeostat-alerts.yaml'), 'utf8');
  const replace = (pattern: RegExp, by: string, expected: number): void => {
    const found = text.match(pattern)?.length ?? 0;
    if (found !== expected)
      throw new Error(`the shipped rules changed: ${pattern} found ${found} times, not ${expected}`);
    text = text.replace(pattern, by);
  };
  replace(/^(\s+)for: \d+m$/gm, `$1for: ${scale.forSeconds}s`, 6);
  replace(/\[(1|5)m\]/g, `[${scale.windowSeconds}s]`, 3);
  replace(/\{phase="Reconciling"\}\) > 900$/m, `{phase="Reconciling"}) > ${scale.notReadySeconds}`, 1);
  replace(/\{phase="Degraded"\}\) > 120$/m, `{phase="Degraded"}) > ${scale.notReadySeconds}`, 1);
  replace(/> 0\.8 \* 500$/m, `> 0.8 * ${scale.actionLimitPerSecond}`, 1);
  writeFileSync(file, text);
}
