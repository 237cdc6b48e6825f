/**
 * `HOMEOSTAT_FAIRNESS_WEIGHTS`, read by the bridge and the API alike (see `core/fairness.ts`).
 */
import { z } from 'zod';
import { parseFairnessWeights } from '../core/fairness';

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
