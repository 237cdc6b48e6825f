/**
 * The plans of homeostat's built-in reconcilers, as plain data for the workflow bundle. Every
 * reconciler a worker registers must have its plan in the bundle that worker runs.
 */
import { planRegistry, type PlanRegistry } from './plan';

/** Plans by `<plural>.<group>`. The built-in reconcilers (PostgresDatabase, App) add theirs here. */
export const builtinPlans: PlanRegistry = planRegistry([]);
