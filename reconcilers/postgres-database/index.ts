/** `PostgresDatabase`: a database and its owner role on a real PostgreSQL server, with a connection Secret. */
import type { CrdOptions } from '../crd';

export { postgresDatabaseReconciler, connectionSecretName, fromPostgresError } from './reconciler';
export { postgresDatabasePlan } from './plan';
export { postgresDatabaseSpec, type PostgresDatabaseSpec } from './schema';

/** CRD extras of `PostgresDatabase`. */
export const postgresDatabaseCrdOptions: CrdOptions = {
  shortNames: ['pgdb'],
  columns: [
    { name: 'Database', type: 'string', jsonPath: '.spec.databaseName' },
    { name: 'Policy', type: 'string', jsonPath: '.spec.deletionPolicy', priority: 1 },
  ],
};
