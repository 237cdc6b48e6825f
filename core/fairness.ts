/**
 * Fairness between teams on a shared Temporal task queue: every task of an object's workflow (its
 * workflow tasks and the activities it schedules, which inherit the workflow's priority, and every run
 * after a continue-as-new) carries the object's Kubernetes namespace as its fairness key. With fairness
 * on (`matching.enableFairness`), Temporal dispatches a backlog round-robin across keys in proportion to
 * their weights, so one team's thousand new objects do not queue another team's one change behind them.
 */

/** Fairness weights by Kubernetes namespace; a namespace not named weighs 1. */
export type FairnessWeights = Readonly<Record<string, number>>;

/**
 * How a process that starts object workflows sets their priority: weights by namespace (fairness on,
 * the default), or `false` (`HOMEOSTAT_FAIRNESS=off`): no fairness key, so every team's tasks share one
 * first-in, first-out backlog (and the bridge's queue is first-in, first-out too). Off saves what
 * fairness costs where it is billed (docs/fairness.md) and serves benchmarks as the baseline.
 */
export type FairnessSetting = FairnessWeights | false;

/** The fairness key of a cluster-scoped object's tasks (Kubernetes namespace names cannot start with `_`). */
export const clusterFairnessKey = '_cluster';

/** The priority an object's workflow is started with: its namespace as fairness key, and that key's weight. */
export interface ObjectPriority {
  readonly fairnessKey: string;
  readonly fairnessWeight?: number;
}

/** The fairness key of an object's tasks: its namespace, or {@link clusterFairnessKey} when it has none. */
export function fairnessKeyFor(ref: { readonly namespace?: string }): string {
  return ref.namespace || clusterFairnessKey;
}

/** The priority of an object's workflow under `weights`. */
export function objectPriority(ref: { readonly namespace?: string }, weights: FairnessWeights = {}): ObjectPriority {
  const fairnessKey = fairnessKeyFor(ref);
  const weight = weights[fairnessKey];
  return weight === undefined ? { fairnessKey } : { fairnessKey, fairnessWeight: weight };
}

/**
 * Parses `HOMEOSTAT_FAIRNESS_WEIGHTS`: `namespace=weight` pairs separated by commas (`team-a=2,batch=0.25`;
 * `_cluster` for cluster-scoped objects). Temporal clamps weights to 0.001–1000; values outside are refused
 * here rather than changed silently.
 */
export function parseFairnessWeights(text: string): FairnessWeights {
  const weights: Record<string, number> = {};
  for (const entry of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const eq = entry.indexOf('=');
    const key = eq < 0 ? '' : entry.slice(0, eq).trim();
    const weight = Number(eq < 0 ? NaN : entry.slice(eq + 1).trim());
    if (!/^(_cluster|[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)$/.test(key)) {
      throw new Error(`fairness weights look like <namespace>=<weight>,…: ${JSON.stringify(entry)} names no namespace`);
    }
    if (!Number.isFinite(weight) || weight < 0.001 || weight > 1000) {
      throw new Error(
        `the fairness weight of ${key} must be a number from 0.001 to 1000, not ${JSON.stringify(entry.slice(eq + 1))}`,
      );
    }
    weights[key] = weight;
  }
  return weights;
}
