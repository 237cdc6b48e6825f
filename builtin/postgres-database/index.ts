/**
 * PostgreSQL: `PostgresServer` (cluster-scoped; its admin Secret kept in homeostat's own namespace) and
 * `PostgresDatabase` (a database and its owner role on a server, with a connection Secret).
 */

export {
  createPostgresDatabaseReconciler,
  postgresDatabaseReconciler,
  connectionSecretName,
  extensionSchema,
} from './reconciler';
export { ownerMark, markedUid, renameRefusal } from './ownership';
export {
  appliedConnectionLimit,
  connectionLimitsFor,
  type AppliedLimit,
  type ConnectionLimits,
  type ConnectionSettings,
} from './connection-limits';
export { postgresDatabasePlan } from './plan';
export { postgresDatabaseSpec, type PostgresDatabaseSpec } from './schema';
export { createPostgresServerReconciler, postgresServerReconciler } from './server-reconciler';
export { postgresServerPlan } from './server-plan';
export {
  connectionLimitsSchema,
  postgresServerSpec,
  selectorMatches,
  type PostgresServerSpec,
  type NamespaceSelector,
} from './server-schema';
export { defaultSystemNamespace, type PostgresOptions } from './server';
export { scramSha256Verifier } from './scram';
export { parseServerUrl, tlsOptionsFor, type ServerAddress, type SslMode } from './connection';
export { fromPostgresError } from './errors';
