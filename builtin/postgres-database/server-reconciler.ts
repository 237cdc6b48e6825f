/**
 * The `PostgresServer` reconciler: it connects with the admin credentials (from the Secret in
 * homeostat's own namespace) and reports what the admin may do and which allowed extensions the server
 * lacks. It changes nothing on the server; `PostgresDatabase` objects do the work.
 */
import { defineReconciler, terminal, type CrdOptions, type ReferenceWatch } from '../../reconcilers';
import { connect } from './connection';
import { fromPostgresError } from './errors';
import { postgresServerPlan } from './server-plan';
import { postgresServerSpec } from './server-schema';
import { adminAddress, adminFacts, adminProblem, defaultSystemNamespace, type PostgresOptions } from './server';

const postgresServerCrdOptions: CrdOptions = {
  shortNames: ['pgserver'],
  columns: [{ name: 'Secret', type: 'string', jsonPath: '.spec.adminSecretRef.name', priority: 1 }],
};

/** The `PostgresServer` reconciler for a system namespace. */
export function createPostgresServerReconciler(options: PostgresOptions = {}) {
  const systemNamespace = options.systemNamespace ?? defaultSystemNamespace;
  /** The admin Secret, in the system namespace: rotating it re-checks the server. */
  const adminSecretReference: ReferenceWatch = {
    apiVersion: 'v1',
    kind: 'Secret',
    referencedBy: (object) => {
      const name = (object.spec as { adminSecretRef?: { name?: unknown } } | undefined)?.adminSecretRef?.name;
      return typeof name === 'string' && name !== '' ? [{ name, namespace: systemNamespace }] : [];
    },
  };
  return defineReconciler({
    crd: postgresServerCrdOptions,
    references: [adminSecretReference],
    reads: [{ apiVersion: 'v1', kind: 'Secret', scope: { namespace: systemNamespace } }],
    plan: postgresServerPlan,
    schema: postgresServerSpec,
    steps: {
      async connect(ctx) {
        const address = await adminAddress(ctx, ctx.object.name, ctx.spec, systemNamespace);
        let db;
        try {
          db = await connect(address);
        } catch (err) {
          throw fromPostgresError(err, `connect to PostgresServer ${ctx.object.name}`);
        }
        try {
          const facts = await adminFacts(db);
          const problem = adminProblem(facts);
          if (problem) throw terminal(new Error(problem));
          const available = new Set(
            (
              await db.query<{ name: string }>(
                'SELECT name FROM pg_catalog.pg_available_extensions WHERE name = ANY($1)',
                [ctx.spec.extensions],
              )
            ).rows.map((r) => r.name),
          );
          const missing = ctx.spec.extensions.filter((e) => !available.has(e));
          const major = Math.floor(facts.version / 10000);
          return {
            message:
              `PostgreSQL ${major}, admin ${facts.user} (${facts.superuser ? 'superuser' : 'CREATEROLE'})` +
              (missing.length ? `; allowed extensions not installed on the server: ${missing.join(', ')}` : ''),
          };
        } catch (err) {
          throw fromPostgresError(err, `check PostgresServer ${ctx.object.name}`);
        } finally {
          await db.end().catch(() => {});
        }
      },
    },
  });
}

/** The `PostgresServer` reconciler with admin Secrets in `homeostat-system`. */
export const postgresServerReconciler = createPostgresServerReconciler();
