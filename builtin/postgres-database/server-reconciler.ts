/**
 * The `PostgresServer` reconciler: it connects with the admin credentials (from the Secret in
 * homeostat's own namespace) and reports what the admin may do and which allowed extensions the server
 * lacks, and the connection limits its databases get (status `defaultConnectionLimit` and
 * `connectionLimitCeiling`) and how many connections stay reserved for the admin. It changes nothing on
 * the server; `PostgresDatabase` objects do the work.
 */
import { defineReconciler, terminal, type CrdOptions, type ReferenceWatch } from '../../reconcilers';
import type { Client } from 'pg';
import { connect } from './connection';
import { connectionLimitsFor, readConnectionSettings, type ConnectionSettings } from './connection-limits';
import { fromPostgresError } from './errors';
import { postgresServerPlan } from './server-plan';
import { postgresServerSpec } from './server-schema';
import { adminAddress, adminFacts, adminProblem, defaultSystemNamespace, type PostgresOptions } from './server';

const postgresServerCrdOptions: CrdOptions = {
  shortNames: ['pgserver'],
  columns: [
    { name: 'Secret', type: 'string', jsonPath: '.spec.adminSecretRef.name', priority: 1 },
    { name: 'Default', type: 'integer', jsonPath: '.status.defaultConnectionLimit', priority: 1 },
    { name: 'Ceiling', type: 'integer', jsonPath: '.status.connectionLimitCeiling', priority: 1 },
  ],
  status: {
    defaultConnectionLimit: {
      type: 'integer',
      description: 'The connection limit a PostgresDatabase on this server gets when it sets none (or -1).',
    },
    connectionLimitCeiling: {
      type: 'integer',
      description: 'The most connections any one PostgresDatabase on this server may have.',
    },
  },
};

/**
 * How many connections the admin keeps when ordinary roles have taken every other one: a superuser
 * the `superuser_reserved_connections`, a member of `pg_use_reserved_connections` (PostgreSQL 16+)
 * the `reserved_connections`; 0 means a tenant at its limits with others could lock the admin out.
 */
async function adminReserve(db: Client, superuser: boolean, settings: ConnectionSettings): Promise<number> {
  if (superuser) return settings.superuserReserved;
  if (settings.reserved === 0) return 0;
  const member = await db.query<{ ok: boolean }>(
    "SELECT pg_catalog.pg_has_role(current_user, 'pg_use_reserved_connections', 'USAGE') AS ok",
  );
  return member.rows[0]?.ok ? settings.reserved : 0;
}

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
          const settings = await readConnectionSettings(db);
          const limits = connectionLimitsFor(ctx.spec.connectionLimits, settings);
          const reserve = await adminReserve(db, facts.superuser, settings);
          return {
            message:
              `PostgreSQL ${major}, admin ${facts.user} (${facts.superuser ? 'superuser' : 'CREATEROLE'})` +
              `; ${limits.available} of ${settings.maxConnections} connections for ordinary roles, ` +
              `each database ${limits.default} by default and at most ${limits.ceiling}` +
              (reserve
                ? `; ${reserve} reserved for the admin`
                : '; none reserved for the admin (grant it pg_use_reserved_connections and set reserved_connections)') +
              (missing.length ? `; allowed extensions not installed on the server: ${missing.join(', ')}` : ''),
            status: { defaultConnectionLimit: limits.default, connectionLimitCeiling: limits.ceiling },
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
