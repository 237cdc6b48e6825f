/**
 * The plans of homeostat's built-in reconcilers, as plain data for the workflow bundle. Every
 * reconciler a worker registers must have its plan in the bundle that worker runs.
 */
import { appPlan } from './app/plan';
import { planRegistry, type PlanRegistry } from './plan';
import { postgresDatabasePlan } from './postgres-database/plan';

/** Plans by `<plural>.<group>`: PostgresDatabase and App. */
export const builtinPlans: PlanRegistry = planRegistry([postgresDatabasePlan, appPlan]);
