/** `PostgresDatabase`: a database and its owner role on a real PostgreSQL server, with a connection Secret. */

export { postgresDatabaseReconciler, connectionSecretName, fromPostgresError } from './reconciler';
export { postgresDatabasePlan } from './plan';
export { postgresDatabaseSpec, type PostgresDatabaseSpec } from './schema';
