/**
 * The built-in operator shipped with homeostat (`homeostat/builtin`): `PostgresServer`,
 * `PostgresDatabase` and `App`. Written only against the public authoring API (`homeostat`), as any
 * platform team's operator is; lint refuses any other import of homeostat's own code here.
 */
import { defineOperator } from '../reconcilers';
import { appReconciler } from './app';
import {
  createPostgresDatabaseReconciler,
  createPostgresServerReconciler,
  type PostgresOptions,
} from './postgres-database';

export * from './app';
export * from './postgres-database';

/** Options of {@link createBuiltinOperator}. */
export type BuiltinOperatorOptions = PostgresOptions;

/**
 * The built-in operator for a system namespace: `PostgresServer` admin Secrets are read from
 * `systemNamespace` only (the `homeostat` binary passes HOMEOSTAT_SYSTEM_NAMESPACE).
 */
export function createBuiltinOperator(options: BuiltinOperatorOptions = {}) {
  return defineOperator({
    name: 'homeostat-builtin',
    reconcilers: [createPostgresServerReconciler(options), createPostgresDatabaseReconciler(options), appReconciler],
  });
}

/** The built-in operator (admin Secrets in `homeostat-system`): the default of every `homeostat` command. */
export const builtinOperator = createBuiltinOperator();

export default builtinOperator;
