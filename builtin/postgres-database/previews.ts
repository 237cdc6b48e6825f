/**
 * Dry-run previews of the `PostgresDatabase` steps that reach PostgreSQL: the statements each would
 * run, computed from catalog reads on a read-only admin session (`default_transaction_read_only` set
 * at connection start, so not even a mistake here could run DDL). They follow the steps' own
 * decisions (`reconciler.ts`, `database-step.ts`) branch for branch; a refusal the step would raise
 * (a rename, a role or database homeostat did not create) is raised the same way. Passwords are never
 * shown: a statement carrying one shows `'…'` instead.
 */
import { adoptionRefused, terminal, type PlannedChange, type StepContext } from '../../reconcilers';
import { withAdmin } from './admin-session';
import { appliedConnectionLimit } from './connection-limits';
import {
  databaseRefusal,
  markedUid,
  readDatabase,
  readMarkedNames,
  readRole,
  renameRefusal,
  roleRefusal,
} from './ownership';
import type { PostgresDatabaseSpec } from './schema';

type Ctx = StepContext<PostgresDatabaseSpec>;

const sql = (target: string, statement: string): PlannedChange => ({
  action: statement.split(' ')[0]!.toLowerCase(),
  target,
  detail: statement,
});

/**
 * A connection limit change: action `lower` or `raise` (the approval rule of `approvals.ts` asks about
 * `lower`), the statement and the limit it replaces. -1 (no limit, never set by homeostat) is the highest.
 */
const limitChange = (target: string, statement: string, from: number, to: number): PlannedChange => ({
  action: from === -1 || (to !== -1 && to < from) ? 'lower' : 'raise',
  target,
  detail: `${statement} (from ${from})`,
});

/** The `role` step's statements. */
export function previewRole(ctx: Ctx, systemNamespace: string): Promise<PlannedChange[]> {
  const role = ctx.spec.ownerRole;
  const target = `role ${role}`;
  return withAdmin(
    ctx,
    systemNamespace,
    `preview role ${role}`,
    async ({ db, facts, server, limits }) => {
      const ident = db.escapeIdentifier(role);
      const { limit } = appliedConnectionLimit(ctx.spec.connectionLimit, limits, server.name);
      const rename = renameRefusal('ownerRole', (await readMarkedNames(db, ctx.object.uid)).roles, role);
      if (rename) throw terminal(new Error(rename));
      const row = await readRole(db, role);
      const grant = `GRANT ${ident} TO CURRENT_USER WITH INHERIT FALSE, SET TRUE`;
      if (!row) {
        return [
          sql(
            target,
            `CREATE ROLE ${ident} LOGIN PASSWORD '…' NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION ` +
              `NOBYPASSRLS INHERIT CONNECTION LIMIT ${limit}`,
          ),
          sql(target, `COMMENT ON ROLE ${ident} IS 'homeostat: <this object's UID>'`),
          ...(facts.superuser ? [] : [sql(target, grant)]),
        ];
      }
      const refusal = roleRefusal(row, ctx.object.uid);
      if (refusal) throw adoptionRefused(`PostgreSQL role ${role}`, refusal);
      const out: PlannedChange[] = [];
      if (!row.canlogin) out.push(sql(target, `ALTER ROLE ${ident} WITH LOGIN`));
      if (row.limit !== limit) {
        out.push(limitChange(target, `ALTER ROLE ${ident} WITH CONNECTION LIMIT ${limit}`, row.limit, limit));
      }
      if (!facts.superuser) {
        const can = await db.query<{ ok: boolean }>("SELECT pg_catalog.pg_has_role(current_user, $1, 'SET') AS ok", [
          role,
        ]);
        if (!can.rows[0]?.ok) out.push(sql(target, grant));
      }
      return out;
    },
    { readOnly: true },
  );
}

/** The `database` step's statements. */
export function previewDatabase(ctx: Ctx, systemNamespace: string): Promise<PlannedChange[]> {
  const { databaseName: name, ownerRole: owner } = ctx.spec;
  const target = `database ${name}`;
  return withAdmin(
    ctx,
    systemNamespace,
    `preview database ${name}`,
    async ({ db, facts, server, limits }) => {
      const { limit } = appliedConnectionLimit(ctx.spec.connectionLimit, limits, server.name);
      const ident = db.escapeIdentifier(name);
      const ownerIdent = db.escapeIdentifier(owner);
      const mark = sql(target, `COMMENT ON DATABASE ${ident} IS 'homeostat: <this object's UID>'`);
      const restrict = [
        sql(target, `REVOKE ALL ON DATABASE ${ident} FROM PUBLIC`),
        sql(target, `GRANT CONNECT, TEMPORARY ON DATABASE ${ident} TO ${ownerIdent}`),
        ...(facts.superuser
          ? []
          : [sql(target, `GRANT CONNECT, CREATE ON DATABASE ${ident} TO ${db.escapeIdentifier(facts.user)}`)]),
      ];
      const rename = renameRefusal('databaseName', (await readMarkedNames(db, ctx.object.uid)).databases, name);
      if (rename) throw terminal(new Error(rename));
      const row = await readDatabase(db, name);
      if (!row) {
        return [
          sql(target, `CREATE DATABASE ${ident} OWNER ${ownerIdent} TEMPLATE template0 CONNECTION LIMIT ${limit}`),
          mark,
          ...restrict,
        ];
      }
      const refusal = databaseRefusal(row, ctx.object.uid, owner);
      if (refusal) throw adoptionRefused(`PostgreSQL database ${name}`, refusal);
      return [
        ...(row.owner !== owner ? [sql(target, `ALTER DATABASE ${ident} OWNER TO ${ownerIdent}`)] : []),
        ...(markedUid(row.comment) !== ctx.object.uid ? [mark] : []),
        ...(row.publicConnect || !row.ownerConnect || !row.adminConnect ? restrict : []),
        ...(row.limit !== limit
          ? [limitChange(target, `ALTER DATABASE ${ident} CONNECTION LIMIT ${limit}`, row.limit, limit)]
          : []),
      ];
    },
    { readOnly: true },
  );
}

/** The `extensions` step's statements (the database may not exist yet: then all of them). */
export async function previewExtensions(
  ctx: Ctx,
  systemNamespace: string,
  extensionSchema: string,
): Promise<PlannedChange[]> {
  const { extensions, databaseName, ownerRole } = ctx.spec;
  if (extensions.length === 0) return [];
  const target = `database ${databaseName}`;
  const exists = await withAdmin(
    ctx,
    systemNamespace,
    `preview extensions in ${databaseName}`,
    async ({ db, server }) => {
      const refused = extensions.filter((e) => !server.spec.extensions.includes(e));
      if (refused.length) {
        throw terminal(new Error(`extensions ${refused.join(', ')} are not allowed by PostgresServer ${server.name}`));
      }
      return (await readDatabase(db, databaseName)) !== undefined;
    },
    { readOnly: true },
  );
  const quote = (s: string): string => `"${s.replace(/"/g, '""')}"`;
  /** The extension schema's statements, when the admin `user` creates it. */
  const newSchema = (user: string): PlannedChange[] => [
    sql(target, `CREATE SCHEMA ${quote(extensionSchema)} AUTHORIZATION ${quote(user)}`),
    sql(target, `GRANT USAGE ON SCHEMA ${quote(extensionSchema)} TO ${quote(ownerRole)}`),
    sql(
      target,
      `ALTER ROLE ${quote(ownerRole)} IN DATABASE ${quote(databaseName)} ` +
        `SET search_path = "$user", public, ${quote(extensionSchema)}`,
    ),
  ];
  const create = (ext: string) =>
    sql(target, `CREATE EXTENSION IF NOT EXISTS ${quote(ext)} SCHEMA ${quote(extensionSchema)}`);
  if (!exists) return [...newSchema('<admin>'), ...extensions.map(create)];
  return withAdmin(
    ctx,
    systemNamespace,
    `preview extensions in ${databaseName}`,
    async ({ db, facts }) => {
      const found = await db.query<{ owner: string }>(
        'SELECT pg_catalog.pg_get_userbyid(n.nspowner) AS owner FROM pg_catalog.pg_namespace n WHERE n.nspname = $1',
        [extensionSchema],
      );
      const schemaOwner = found.rows[0]?.owner;
      if (schemaOwner !== undefined && schemaOwner !== facts.user) {
        throw adoptionRefused(
          `schema ${extensionSchema} in database ${databaseName}`,
          `it is owned by ${schemaOwner}, not by the admin`,
        );
      }
      const present = new Set(
        (await db.query<{ extname: string }>('SELECT extname FROM pg_catalog.pg_extension')).rows.map((r) => r.extname),
      );
      return [
        ...(schemaOwner === undefined ? newSchema(facts.user) : []),
        ...extensions.filter((e) => !present.has(e)).map(create),
      ];
    },
    { database: databaseName, readOnly: true },
  );
}

/** The `drop` cleanup step's statements (nothing under `deletionPolicy: Retain`). */
export function previewDrop(ctx: Ctx, systemNamespace: string): Promise<PlannedChange[]> {
  if (ctx.spec.deletionPolicy === 'Retain') return Promise.resolve([]);
  const { databaseName, ownerRole } = ctx.spec;
  return withAdmin(
    ctx,
    systemNamespace,
    `preview drop ${databaseName}`,
    async ({ db }) => {
      const uid = ctx.object.uid;
      const marked = await readMarkedNames(db, uid);
      const databases = new Set(marked.databases);
      const database = await readDatabase(db, databaseName);
      if (database && !databaseRefusal(database, uid, ownerRole)) databases.add(databaseName);
      const out: PlannedChange[] = [];
      for (const name of databases) {
        out.push(sql(`database ${name}`, `DROP DATABASE IF EXISTS ${db.escapeIdentifier(name)} WITH (FORCE)`));
      }
      for (const name of new Set([...marked.roles, ownerRole])) {
        const role = await readRole(db, name);
        if (role && !roleRefusal(role, uid))
          out.push(sql(`role ${name}`, `DROP ROLE IF EXISTS ${db.escapeIdentifier(name)}`));
      }
      return out;
    },
    { readOnly: true },
  );
}
