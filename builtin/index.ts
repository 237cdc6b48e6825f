/**
 * The built-in operator shipped with homeostat (`homeostat/builtin`): `PostgresDatabase` and `App`.
 * Written only against the public authoring API (`homeostat`), as any platform team's operator is;
 * lint refuses any other import of homeostat's own code here.
 */
import { defineOperator } from '../reconcilers';
import { appReconciler } from './app';
import { postgresDatabaseReconciler } from './postgres-database';

export * from './app';
export * from './postgres-database';

/** The built-in operator: the default of every `homeostat` command. */
export const builtinOperator = defineOperator({
  name: 'homeostat-builtin',
  reconcilers: [postgresDatabaseReconciler, appReconciler],
});

export default builtinOperator;
