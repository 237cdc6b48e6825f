/**
 * `HOMEOSTAT_FAIRNESS` and `HOMEOSTAT_FAIRNESS_WEIGHTS`, read by the bridge and the API alike (see
 * `core/fairness.ts`).
 */
import { z } from 'zod';
import { type FairnessSetting, type FairnessWeights, parseFairnessWeights } from '../core/fairness';

/**
 * Whether the object workflows a process starts carry their namespace as fairness key: `namespace`
 * (the default) or `off` (no key: one first-in, first-out backlog for every team).
 */
export const fairnessModeEnv = z.enum(['namespace', 'off']).default('namespace');

/** The setting a process passes on: the weights, or `false` when `HOMEOSTAT_FAIRNESS=off`. */
export function fairnessSetting(mode: 'namespace' | 'off', weights: FairnessWeights): FairnessSetting {
  return mode === 'off' ? false : weights;
}

/**
 * Fairness weights by Kubernetes namespace for the object workflows a process starts:
 * `team-a=2,batch=0.25` (`_cluster`: cluster-scoped objects). Unset: every namespace weighs 1.
 */
export const fairnessWeightsEnv = z
  .string()
  .default('')
  .transform((text, ctx) => {
    try {
      return parseFairnessWeights(text);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
      return z.NEVER;
    }
  });
