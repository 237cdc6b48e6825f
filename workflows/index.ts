/**
 * The workflow entry module of homeostat's worker: the generic per-object workflow. It holds no plan:
 * every operator's plans reach it through the observe activity, so one bundle serves every operator.
 * The bundler registers every function exported here as a workflow type.
 */
import { createObjectWorkflow } from './object-workflow';

/** The per-object workflow (workflow type `objectWorkflow`). */
export const objectWorkflow = createObjectWorkflow();

/** The compatibility check of `homeostat rollout` (workflow type `compatibilityCheckWorkflow`). */
export { compatibilityCheckWorkflow } from './compatibility-check-workflow';
