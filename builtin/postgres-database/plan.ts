/**
 * The `PostgresDatabase` plan (plain data, bundled into workflow code): credentials first, then the
 * role, the database owned by it, its extensions, and the connection Secret. A drift check every 30
 * minutes (or at the object's own interval) puts back an owner or connection limit changed by hand.
 * Every step is a few quick, idempotent SQL statements or a Kubernetes apply: local.
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
    {
      name: 'credentials',
      summary: 'ensure the role password Secret',
      startToCloseTimeout: '30 seconds',
      retry,
      execution: 'local',
    },
    {
      name: 'role',
      dependsOn: ['credentials'],
      summary: 'ensure the owner role',
      startToCloseTimeout: '30 seconds',
      retry,
      execution: 'local',
    },
    {
      name: 'database',
      dependsOn: ['role'],
      summary: 'ensure the database, its owner and connection limit',
      startToCloseTimeout: '1 minute',
      retry,
      execution: 'local',
    },
    {
      name: 'extensions',
      dependsOn: ['database'],
      summary: 'ensure the extensions',
      startToCloseTimeout: '1 minute',
      retry,
      execution: 'local',
    },
    {
      name: 'connection-secret',
      dependsOn: ['database'],
      summary: 'write the connection Secret',
      startToCloseTimeout: '30 seconds',
      retry,
      execution: 'local',
    },
  ],
  cleanup: [
    {
      name: 'drop',
      summary: 'drop database and role (deletionPolicy Delete)',
      startToCloseTimeout: '1 minute',
      retry,
      execution: 'local',
    },
  ],
  // PostgreSQL sends no events: the drift check is how a change made by hand is found. 30 minutes:
  // 1,440 checks a month at 2 actions each ($0.14 per idle database at $50 per million); a database
  // that must be watched closer asks for it with the homeostat.dev/drift-check-interval annotation.
  driftCheckInterval: '30 minutes',
});
