/**
 * The workflow entry module of homeostat's worker: the per-object workflow with the plans of the
 * built-in reconcilers. The bundler registers every function exported here as a workflow type.
 */
import { builtinPlans } from '../reconcilers/builtin-plans';
import { createObjectWorkflow } from './object-workflow';

/** The per-object workflow (workflow type `objectWorkflow`). */
export const objectWorkflow = createObjectWorkflow(builtinPlans);
