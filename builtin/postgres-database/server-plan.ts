/**
 * The `PostgresServer` plan (plain data, bundled into workflow code): one step that connects with the
 * admin credentials and reports what the admin may do; checked again every 30 minutes.
 */
import { definePlan } from '../../reconcilers';

/** The plan of `PostgresServer` (`homeostat.dev/v1alpha1`, cluster-scoped). */
export const postgresServerPlan = definePlan({
  group: 'homeostat.dev',
  version: 'v1alpha1',
  kind: 'PostgresServer',
  plural: 'postgresservers',
  scope: 'Cluster',
  steps: [
    {
      name: 'connect',
      summary: 'connect as the admin and check its rights',
      startToCloseTimeout: '30 seconds',
      retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', attemptsPerRound: 3 },
      execution: 'local',
    },
  ],
  driftCheckInterval: '30 minutes',
});
