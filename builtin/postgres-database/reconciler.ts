/**
 * The `PostgresDatabase` reconciler: a database and its owner role on a `PostgresServer`, kept in line
 * with the spec, and a connection Secret owned by the object.
 *
 * Tenant isolation (issue 13). A tenant controls this object's spec and nothing else, so:
 * - The server is named (`serverRef`), never its admin Secret, which lives in homeostat's own namespace;
 *   the server's `namespaceSelector` must select the object's namespace.
 * - What homeostat creates carries the object's UID (`COMMENT ON ROLE/DATABASE`, see {@link ownerMark}).
 *   The UID is assigned by the API server, not written by the tenant, and only a role with CREATEROLE
 *   may comment on a role, so the mark cannot be forged through the spec or by the tenant's own role.
 *   An existing role or database without this object's mark is refused (`AdoptionRefused`) and left
 *   untouched; superusers and roles with CREATEROLE, REPLICATION or BYPASSRLS always are. Deletion
 *   (`deletionPolicy: Delete`) drops only what carries the mark.
 * - The password is sent only when the role is created, or when a login with the stored password fails,
 *   and then as a SCRAM-SHA-256 verifier computed here: never in clear, so never in the server's
 *   statement log or `pg_stat_activity`.
 * - Extensions come from the server's allow-list and are created in a schema the tenant cannot write to
 *   (see the `extensions` step).
 *
 * A shared server one tenant cannot deny (issue 31): databases cloned from `template0`, `CONNECT` only
 * for their owner, a connection limit on every database and role (see `database-step.ts` and
 * `connection-limits.ts`); `databaseName` and `ownerRole` are fixed once created (a new name is refused),
 * and deletion drops everything carrying the object's mark, whatever the spec names now.
 *
 * Every step is idempotent and re-reads what it needs, so a worker killed mid-step is harmless: the role
 * is created and marked in one implicit transaction, and a database left unmarked by a crash between `CREATE
 * DATABASE` (which cannot run in a transaction) and its `COMMENT` is recognised by its owner, the role
 * this object marked.
 */
import { randomBytes } from 'node:crypto';
import type { V1Secret } from '@kubernetes/client-node';
import {
  adoptionRefused,
  childLabels,
  defineReconciler,
  HomeostatError,
  managedByValue,
  terminal,
  type CrdOptions,
  type ReferenceWatch,
  type StepContext,
} from '../../reconcilers';
import { withAdmin } from './admin-session';
import { connect, tenantUrl, type ServerAddress } from './connection';
import { appliedConnectionLimit } from './connection-limits';
import { ensureDatabase } from './database-step';
import { previewDatabase, previewDrop, previewExtensions, previewRole } from './previews';
import { dropApproval, lowerLimitApproval } from './approvals';
import { fromPostgresError } from './errors';
import {
  asOwner,
  databaseRefusal,
  ownerMark,
  readDatabase,
  readMarkedNames,
  readRole,
  renameRefusal,
  roleRefusal,
} from './ownership';
import { scramSha256Verifier } from './scram';
import { defaultSystemNamespace, resolveServer, type PostgresOptions } from './server';
import { postgresDatabasePlan } from './plan';
import { postgresDatabaseSpec, type PostgresDatabaseSpec } from './schema';

export { fromPostgresError };

type Ctx = StepContext<PostgresDatabaseSpec>;

/** Name of the connection Secret of an object. */
export function connectionSecretName(ctx: Pick<Ctx, 'spec' | 'object'>): string {
  return ctx.spec.connectionSecretName ?? `${ctx.object.name}-connection`;
}

/** The schema extensions are created in: owned by the admin, so the database owner cannot write to it. */
export const extensionSchema = 'extensions';

const decode = (secret: V1Secret | undefined, key: string): string | undefined => {
  const value = secret?.data?.[key];
  return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
};

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

async function readPassword(ctx: Ctx): Promise<string> {
  const secret = await ctx.children.read<V1Secret>({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: connectionSecretName(ctx) },
  });
  const password = decode(secret, 'password');
  if (!password)
    throw new HomeostatError('ERR_STEP_FAILED', `connection Secret ${connectionSecretName(ctx)} has no password yet`);
  return password;
}

/** CRD extras of `PostgresDatabase`. */
const postgresDatabaseCrdOptions: CrdOptions = {
  shortNames: ['pgdb'],
  columns: [
    { name: 'Server', type: 'string', jsonPath: '.spec.serverRef.name', priority: 1 },
    { name: 'Database', type: 'string', jsonPath: '.spec.databaseName' },
    { name: 'Policy', type: 'string', jsonPath: '.spec.deletionPolicy', priority: 1 },
    { name: 'Limit', type: 'integer', jsonPath: '.status.connectionLimit', priority: 1 },
  ],
  status: {
    connectionLimit: {
      type: 'integer',
      description:
        "The connection limit that applies to the database and its owner role: spec.connectionLimit, the PostgresServer's default when unset or -1, lowered to the server's ceiling.",
    },
  },
};

/**
 * The server an object names, read from its stored (not yet validated) spec: a change to the server
 * (a new selector, a new allow-list) re-reconciles every database on it.
 */
const serverReference: ReferenceWatch = {
  apiVersion: 'homeostat.dev/v1alpha1',
  kind: 'PostgresServer',
  referencedBy: (object) => {
    const name = (object.spec as { serverRef?: { name?: unknown } } | undefined)?.serverRef?.name;
    return typeof name === 'string' && name !== '' ? [{ name }] : [];
  },
};

/** Whether the role logs in with the password: `'ok'`, `'wrong'` (reset it) or `'unknown'` (leave it). */
async function loginCheck(address: ServerAddress, user: string, password: string, database: string) {
  for (const db of [database, address.database]) {
    try {
      const client = await connect(address, { database: db, login: { user, password }, pinSearchPath: false });
      await client.end().catch(() => {});
      return 'ok' as const;
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (code === '28P01') return 'wrong' as const; // invalid_password
      if (code === '42501') return 'ok' as const; // authenticated, then refused CONNECT on that database
      if (code === '3D000') continue; // the database is not there yet: try the admin's
      if (code === '28000' || code === '53300' || code === '55000' || code === '57P03') return 'unknown' as const;
      throw err;
    }
  }
  return 'unknown' as const;
}

/** The `PostgresDatabase` reconciler for a system namespace (where `PostgresServer` admin Secrets live). */
export function createPostgresDatabaseReconciler(options: PostgresOptions = {}) {
  const systemNamespace = options.systemNamespace ?? defaultSystemNamespace;

  // The steps, each named once beside its preview in the definition below.
  const impl = {
    credentials: async (ctx: Ctx) => {
      const name = connectionSecretName(ctx);
      const existing = await ctx.children.read<V1Secret>({ apiVersion: 'v1', kind: 'Secret', metadata: { name } });
      if (decode(existing, 'password')) return { message: 'password present' };
      // 24 random bytes from the operating system's CSPRNG; kept only in this Secret.
      const password = randomBytes(24).toString('base64url');
      await ctx.children.apply<V1Secret>({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name, labels: { [childLabels.managedBy]: managedByValue } },
        type: 'Opaque',
        data: { password: b64(password) },
      });
      return { message: 'password generated' };
    },

    role: async (ctx: Ctx) => {
      const role = ctx.spec.ownerRole;
      const uid = ctx.object.uid;
      return withAdmin(ctx, systemNamespace, `ensure role ${role}`, async ({ db, facts, server, limits }) => {
        const ident = db.escapeIdentifier(role);
        // The same limit as the database's, on the role the tenant logs in with: it holds on every
        // database (template1 and postgres included), and only a CREATEROLE role can change it.
        const { limit } = appliedConnectionLimit(ctx.spec.connectionLimit, limits, server.name);
        const rename = renameRefusal('ownerRole', (await readMarkedNames(db, uid)).roles, role);
        if (rename) throw terminal(new Error(rename));
        let row = await readRole(db, role);
        if (!row) {
          const password = await readPassword(ctx);
          // One simple-protocol query of several statements is one implicit transaction: a role
          // without its mark never exists. Unlike BEGIN … COMMIT, it also completes when the worker
          // dies while the statement waits on a lock, so the role is created exactly once.
          const statements = [
            `CREATE ROLE ${ident} LOGIN PASSWORD ${db.escapeLiteral(scramSha256Verifier(password))} ` +
              `NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS INHERIT CONNECTION LIMIT ${limit}`,
            `COMMENT ON ROLE ${ident} IS ${db.escapeLiteral(ownerMark(uid))}`,
            // A CREATEROLE admin holds ADMIN on the roles it creates but cannot act as them; SET lets it
            // create the database owned by the role and run the owner's statements (asOwner).
            ...(facts.superuser ? [] : [`GRANT ${ident} TO CURRENT_USER WITH INHERIT FALSE, SET TRUE`]),
          ];
          try {
            await db.query(statements.join('; '));
            return { message: `role ${role} created` };
          } catch (err) {
            if ((err as { code?: string }).code !== '42710') throw err; // created concurrently: check it
          }
          row = await readRole(db, role);
          if (!row) throw new HomeostatError('ERR_STEP_FAILED', `role ${role} vanished while it was created`);
        }
        const refusal = roleRefusal(row, uid);
        if (refusal) throw adoptionRefused(`PostgreSQL role ${role}`, refusal);
        const fixed: string[] = [];
        if (!row.canlogin) {
          await db.query(`ALTER ROLE ${ident} WITH LOGIN`);
          fixed.push('LOGIN');
        }
        if (row.limit !== limit) {
          await db.query(`ALTER ROLE ${ident} WITH CONNECTION LIMIT ${limit}`);
          fixed.push(`connection limit ${row.limit} → ${limit}`);
        }
        if (!facts.superuser) {
          const can = await db.query<{ ok: boolean }>("SELECT pg_catalog.pg_has_role(current_user, $1, 'SET') AS ok", [
            role,
          ]);
          if (!can.rows[0]?.ok) await db.query(`GRANT ${ident} TO CURRENT_USER WITH INHERIT FALSE, SET TRUE`);
        }
        // The password goes to the server only when the stored one does not log in (changed by hand).
        const password = await readPassword(ctx);
        if ((await loginCheck(server.address, role, password, ctx.spec.databaseName)) === 'wrong') {
          await db.query(`ALTER ROLE ${ident} WITH PASSWORD ${db.escapeLiteral(scramSha256Verifier(password))}`);
          fixed.push('password');
        }
        if (fixed.length) ctx.log.info({ role, fixed }, 'role drift corrected');
        return { message: fixed.length ? `role ${role}: corrected ${fixed.join(', ')}` : `role ${role} in line` };
      });
    },

    /**
     * Extensions run their install scripts with the installing role's rights (a superuser's, or the
     * bootstrap superuser's for trusted extensions) and with `search_path` set to the target schema.
     * In a database the tenant owns, the tenant can create objects in `public` (and set the database's
     * `search_path`), so a script resolving a name there would run the tenant's function as a
     * superuser (the class of CVE-2022-2625 and CVE-2023-39417). So: only extensions on the server's
     * allow-list; the admin's session pins `search_path` at connection start (above any `ALTER
     * DATABASE … SET`); each extension goes into the schema `extensions`, created and owned by the
     * admin, where the tenant has USAGE but not CREATE, so the script's search path holds only
     * `pg_catalog` and a schema the tenant cannot write to. A schema of that name the admin does not
     * own (the tenant made it first) is refused.
     */
    extensions: async (ctx: Ctx) => {
      const { extensions, databaseName, ownerRole } = ctx.spec;
      if (extensions.length === 0) return { message: 'no extensions' };
      return withAdmin(
        ctx,
        systemNamespace,
        `ensure extensions in ${databaseName}`,
        async ({ db, facts, server }) => {
          const refused = extensions.filter((e) => !server.spec.extensions.includes(e));
          if (refused.length) {
            throw terminal(
              new Error(
                `extensions ${refused.join(', ')} are not allowed by PostgresServer ${server.name}` +
                  ` (allowed: ${server.spec.extensions.join(', ') || 'none'})`,
              ),
            );
          }
          const schema = db.escapeIdentifier(extensionSchema);
          const found = await db.query<{ owner: string }>(
            'SELECT pg_catalog.pg_get_userbyid(n.nspowner) AS owner FROM pg_catalog.pg_namespace n WHERE n.nspname = $1',
            [extensionSchema],
          );
          const schemaOwner = found.rows[0]?.owner;
          if (schemaOwner === undefined) {
            await db.query(`CREATE SCHEMA ${schema} AUTHORIZATION ${db.escapeIdentifier(facts.user)}`);
            await db.query(`GRANT USAGE ON SCHEMA ${schema} TO ${db.escapeIdentifier(ownerRole)}`);
            // The owner finds the extensions' types and functions unqualified, as it would in public.
            await db.query(
              `ALTER ROLE ${db.escapeIdentifier(ownerRole)} IN DATABASE ${db.escapeIdentifier(databaseName)} ` +
                `SET search_path = "$user", public, ${schema}`,
            );
          } else if (schemaOwner !== facts.user) {
            throw adoptionRefused(
              `schema ${extensionSchema} in database ${databaseName}`,
              `it is owned by ${schemaOwner}, not by the admin: extensions are only created in a schema the tenant cannot write to`,
            );
          }
          const present = new Set(
            (await db.query<{ extname: string }>('SELECT extname FROM pg_catalog.pg_extension')).rows.map(
              (r) => r.extname,
            ),
          );
          const created: string[] = [];
          for (const ext of extensions) {
            if (present.has(ext)) continue;
            await db.query(`CREATE EXTENSION IF NOT EXISTS ${db.escapeIdentifier(ext)} SCHEMA ${schema}`);
            created.push(ext);
          }
          return {
            message: created.length ? `created ${created.join(', ')}` : `extensions ${extensions.join(', ')}`,
          };
        },
        { database: databaseName },
      );
    },

    connectionSecret: async (ctx: Ctx) => {
      const server = await resolveServer(ctx, ctx.spec.serverRef.name, ctx.object.namespace ?? '', systemNamespace);
      const password = await readPassword(ctx);
      const { databaseName: database, ownerRole: user } = ctx.spec;
      const { host, port, sslmode } = server.address;
      await ctx.children.apply<V1Secret>({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: connectionSecretName(ctx), labels: { [childLabels.managedBy]: managedByValue } },
        type: 'Opaque',
        data: {
          host: b64(host),
          port: b64(String(port)),
          database: b64(database),
          user: b64(user),
          password: b64(password),
          sslmode: b64(sslmode),
          url: b64(tenantUrl(server.address, user, password, database)),
        },
      });
      return { message: `Secret ${connectionSecretName(ctx)} written` };
    },
    drop: async (ctx: Ctx) => {
      if (ctx.spec.deletionPolicy === 'Retain') return { message: 'deletionPolicy Retain: database and role kept' };
      const { databaseName, ownerRole } = ctx.spec;
      const uid = ctx.object.uid;
      const what = `drop database ${databaseName} and role ${ownerRole}`;
      return withAdmin(ctx, systemNamespace, what, async ({ db, facts }) => {
        const done: string[] = [];
        const kept: string[] = [];
        // Whatever the spec names now, everything homeostat created for this object goes with it.
        const marked = await readMarkedNames(db, uid);
        const databases = new Set(marked.databases);
        const database = await readDatabase(db, databaseName);
        if (database && !databaseRefusal(database, uid, ownerRole)) databases.add(databaseName);
        else if (database) kept.push(`database ${databaseName}`);
        for (const name of databases) {
          const row = await readDatabase(db, name);
          if (!row) continue;
          await asOwner(db, facts, row.owner, () =>
            db.query(`DROP DATABASE IF EXISTS ${db.escapeIdentifier(name)} WITH (FORCE)`),
          );
          done.push(`database ${name}`);
        }
        for (const name of new Set([...marked.roles, ownerRole])) {
          const role = await readRole(db, name);
          if (role && !roleRefusal(role, uid)) {
            await db.query(`DROP ROLE IF EXISTS ${db.escapeIdentifier(name)}`);
            done.push(`role ${name}`);
          } else if (role) kept.push(`role ${name}`);
        }
        return {
          message:
            [
              done.length ? `dropped ${done.join(' and ')}` : '',
              kept.length ? `kept ${kept.join(' and ')} (not created by homeostat for this object)` : '',
            ]
              .filter(Boolean)
              .join('; ') || 'nothing to drop',
        };
      });
    },
  };

  return defineReconciler({
    crd: postgresDatabaseCrdOptions,
    references: [serverReference],
    // The server and the namespace's labels (its namespaceSelector), and the admin Secret only in
    // homeostat's own namespace: a tenant names a server, never a Secret.
    reads: [
      { apiVersion: 'homeostat.dev/v1alpha1', kind: 'PostgresServer', scope: 'cluster' },
      { apiVersion: 'v1', kind: 'Namespace', scope: 'cluster' },
      { apiVersion: 'v1', kind: 'Secret', scope: { namespace: systemNamespace } },
    ],
    plan: postgresDatabasePlan,
    schema: postgresDatabaseSpec,
    // Dry runs: the Secret steps write only through ctx.children; the PostgreSQL steps list the
    // statements they would run, from catalog reads on a read-only session (previews.ts).
    steps: {
      credentials: { preview: 'children-only', run: impl.credentials },
      role: { preview: (ctx) => previewRole(ctx, systemNamespace), run: impl.role, approval: lowerLimitApproval },
      database: {
        preview: (ctx) => previewDatabase(ctx, systemNamespace),
        run: (ctx) => ensureDatabase(ctx, systemNamespace),
      },
      extensions: { preview: (ctx) => previewExtensions(ctx, systemNamespace, extensionSchema), run: impl.extensions },
      'connection-secret': { preview: 'children-only', run: impl.connectionSecret },
    },
    // Dropping waits for an approver when the server asks for it (approvals.ts).
    cleanup: { drop: { preview: (ctx) => previewDrop(ctx, systemNamespace), run: impl.drop, approval: dropApproval } },
  });
}

/** The `PostgresDatabase` reconciler with `PostgresServer` admin Secrets in `homeostat-system`. */
export const postgresDatabaseReconciler = createPostgresDatabaseReconciler();
