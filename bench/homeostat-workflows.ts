/**
 * The workflow entry of the benchmark's homeostat worker: homeostat's own object workflow with the
 * plan of the benchmark reconciler (bundled like the built-in entry, `workflows/index.ts`).
 */
import { planRegistry } from '../reconcilers/plan';
import { createObjectWorkflow } from '../workflows/object-workflow';
import { benchPlan } from './reconciler/plan';

/** The object workflow with the `BenchObject` plan (workflow type `objectWorkflow`). */
export const objectWorkflow = createObjectWorkflow(planRegistry([benchPlan]));
