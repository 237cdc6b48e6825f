/**
 * The phases of the primary objects, read from the bridge's cache at scrape time (kube-state-metrics
 * style: no event is counted, the cache is the truth): how many objects of a kind are in each phase,
 * and how long the oldest of them has not been Ready. The alerts on objects stuck `Reconciling` or
 * `Degraded` read the second (deploy/monitoring/homeostat-alerts.yaml).
 */
import { Gauge, type Registry } from 'prom-client';
import type { KubeObject } from './types';

/** A primary kind and how to read its cached objects. */
export interface PhaseSource {
  readonly group: string;
  readonly kind: string;
  /** The kind's cached objects (none while it is not cached). */
  readonly objects: () => Iterable<KubeObject>;
}

interface Condition {
  readonly type?: unknown;
  readonly status?: unknown;
  readonly lastTransitionTime?: unknown;
}

/** When the object's `Ready` condition last turned `False`, in ms since the epoch; undefined when Ready or unknown. */
export function notReadySince(obj: KubeObject): number | undefined {
  const conditions = obj.status?.conditions;
  if (!Array.isArray(conditions)) return undefined;
  const ready = (conditions as Condition[]).find((c) => c?.type === 'Ready');
  if (ready?.status !== 'False' || typeof ready.lastTransitionTime !== 'string') return undefined;
  const at = Date.parse(ready.lastTransitionTime);
  return Number.isNaN(at) ? undefined : at;
}

/**
 * Registers `homeostat_objects{group,kind,phase}` and `homeostat_objects_not_ready_seconds{group,kind,phase}`
 * (the longest time an object of that kind and phase has not been Ready; 0 when none) in `registry`.
 * Objects without a phase yet count as `Pending`.
 */
export function registerPhaseMetrics(registry: Registry, sources: readonly PhaseSource[], now = Date.now): void {
  const labelNames = ['group', 'kind', 'phase'] as const;
  const read = () => {
    const counts = new Map<
      string,
      { labels: Record<(typeof labelNames)[number], string>; n: number; oldest: number }
    >();
    const t = now();
    for (const s of sources) {
      for (const obj of s.objects()) {
        const phase = typeof obj.status?.phase === 'string' ? obj.status.phase : 'Pending';
        const key = `${s.group}/${s.kind}/${phase}`;
        const entry = counts.get(key) ?? { labels: { group: s.group || 'core', kind: s.kind, phase }, n: 0, oldest: 0 };
        entry.n++;
        const since = notReadySince(obj);
        if (since !== undefined) entry.oldest = Math.max(entry.oldest, (t - since) / 1000);
        counts.set(key, entry);
      }
    }
    return [...counts.values()];
  };
  new Gauge({
    name: 'homeostat_objects',
    help: 'Primary objects in the cache, by group, kind and status.phase',
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      for (const e of read()) this.set(e.labels, e.n);
    },
  });
  new Gauge({
    name: 'homeostat_objects_not_ready_seconds',
    help: 'The longest time an object of this group, kind and phase has had its Ready condition False, in seconds',
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      for (const e of read()) this.set(e.labels, e.oldest);
    },
  });
}
