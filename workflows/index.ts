/**
 * The workflow entry module of homeostat's worker: the generic per-object workflow, and the dry-run
 * workflow. Neither holds a plan: every operator's plans reach them through activities, so one bundle
 * serves every operator. The bundler registers every function exported here as a workflow type.
 */
import { createObjectWorkflow } from './object-workflow';

/** The per-object workflow (workflow type `objectWorkflow`). */
export const objectWorkflow = createObjectWorkflow();

/** The compatibility check of `homeostat rollout` (workflow type `compatibilityCheckWorkflow`). */
export { compatibilityCheckWorkflow } from './compatibility-check-workflow';
/** The dry-run workflow (workflow type `planObjectWorkflow`): what a pass would do, without side effects. */
export { planObjectWorkflow } from './plan-workflow';
