/**
 * The `PostgresDatabase` plan (plain data, bundled into workflow code): credentials first, then the
 * role, the database owned by it, its extensions, and the connection Secret. A drift check every
 * minute puts back an owner or connection limit changed by hand.
 */
import { definePlan } from '../../reconcilers';

const retry = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '30 seconds',
  attemptsPerRound: 3,
};

/** The plan of `PostgresDatabase` (`homeostat.dev/v1alpha1`). */
export const postgresDatabasePlan = definePlan({
  group: 'homeostat.dev',
  version: 'v1alpha1',
  kind: 'PostgresDatabase',
  plural: 'postgresdatabases',
  scope: 'Namespaced',
  owns: [{ apiVersion: 'v1', kind: 'Secret' }],
  steps: [
    { name: 'credentials', summary: 'ensure the role password Secret', startToCloseTimeout: '30 seconds', retry },
    {
      name: 'role',
      dependsOn: ['credentials'],
      summary: 'ensure the owner role',
      startToCloseTimeout: '30 seconds',
      retry,
    },
    {
      name: 'database',
      dependsOn: ['role'],
      summary: 'ensure the database, its owner and connection limit',
      startToCloseTimeout: '1 minute',
      retry,
    },
    {
      name: 'extensions',
      dependsOn: ['database'],
      summary: 'ensure the extensions',
      startToCloseTimeout: '1 minute',
      retry,
    },
    {
      name: 'connection-secret',
      dependsOn: ['database'],
      summary: 'write the connection Secret',
      startToCloseTimeout: '30 seconds',
      retry,
    },
  ],
  cleanup: [
    { name: 'drop', summary: 'drop database and role (deletionPolicy Delete)', startToCloseTimeout: '1 minute', retry },
  ],
  driftCheckInterval: '1 minute',
});
