/**
 * Ownership of roles and databases on a PostgreSQL server: the mark homeostat comments on what it
 * creates (the owning object's UID), the catalog rows that say who owns a role or database and what a
 * role may do, why an existing one is refused, and running the statements only a database's owner may run.
 */
import type { Client } from 'pg';
import type { AdminFacts } from './server';

const markPrefix = 'homeostat.dev/owner-uid=';
const markPattern = /^homeostat\.dev\/owner-uid=([0-9a-f-]{1,64})$/;

/** The comment homeostat puts on a role or database it created for the object with this UID. */
export function ownerMark(uid: string): string {
  return `${markPrefix}${uid}`;
}

/** The UID in a homeostat ownership mark, or `undefined` for any other comment (or none). */
export function markedUid(comment: string | null | undefined): string | undefined {
  return comment ? markPattern.exec(comment)?.[1] : undefined;
}

/** What a role row says about ownership and privileges. */
export interface RoleRow {
  readonly superuser: boolean;
  readonly createrole: boolean;
  readonly replication: boolean;
  readonly bypassrls: boolean;
  readonly canlogin: boolean;
  /** `rolconnlimit`: -1 for none. */
  readonly limit: number;
  readonly comment: string | null;
}

/** The catalog row of a role, or `undefined` when there is none. */
export async function readRole(db: Client, role: string): Promise<RoleRow | undefined> {
  return (
    await db.query<RoleRow>(
      `SELECT r.rolsuper AS superuser, r.rolcreaterole AS createrole, r.rolreplication AS replication,
              r.rolbypassrls AS bypassrls, r.rolcanlogin AS canlogin, r.rolconnlimit AS limit,
              pg_catalog.shobj_description(r.oid, 'pg_authid') AS comment
         FROM pg_catalog.pg_roles r WHERE r.rolname = $1`,
      [role],
    )
  ).rows[0];
}

/** Why homeostat will not manage an existing role, or `undefined` when it is this object's. */
export function roleRefusal(row: RoleRow, uid: string): string | undefined {
  if (row.superuser || row.createrole || row.replication || row.bypassrls) {
    const what = [
      row.superuser && 'SUPERUSER',
      row.createrole && 'CREATEROLE',
      row.replication && 'REPLICATION',
      row.bypassrls && 'BYPASSRLS',
    ].filter(Boolean);
    return `it has ${what.join(', ')}: homeostat never manages a privileged role`;
  }
  const owner = markedUid(row.comment);
  if (owner === uid) return undefined;
  return owner
    ? 'it belongs to another homeostat object'
    : 'it exists and was not created by homeostat for this object';
}

/** What a database row says about ownership. */
export interface DatabaseRow {
  readonly owner: string;
  readonly limit: number;
  readonly template: boolean;
  readonly comment: string | null;
  readonly ownerComment: string | null;
  /** Whether every role may connect (`CONNECT` granted to `PUBLIC`, as on a database nobody restricted). */
  readonly publicConnect: boolean;
  /** Whether the owner role holds `CONNECT`. */
  readonly ownerConnect: boolean;
  /** Whether the admin (the session's user) holds `CONNECT`. */
  readonly adminConnect: boolean;
}

/** The catalog row of a database, or `undefined` when there is none. */
export async function readDatabase(db: Client, name: string): Promise<DatabaseRow | undefined> {
  return (
    await db.query<DatabaseRow>(
      `SELECT o.rolname AS owner, d.datconnlimit AS limit, d.datistemplate AS template,
              pg_catalog.shobj_description(d.oid, 'pg_database') AS comment,
              pg_catalog.shobj_description(o.oid, 'pg_authid') AS "ownerComment",
              pg_catalog.has_database_privilege('public', d.oid, 'CONNECT') AS "publicConnect",
              pg_catalog.has_database_privilege(o.oid, d.oid, 'CONNECT') AS "ownerConnect",
              pg_catalog.has_database_privilege(current_user, d.oid, 'CONNECT') AS "adminConnect"
         FROM pg_catalog.pg_database d JOIN pg_catalog.pg_roles o ON o.oid = d.datdba
        WHERE d.datname = $1`,
      [name],
    )
  ).rows[0];
}

/**
 * Whether a database is this object's: marked with its UID (and not owned by another object's role),
 * or unmarked but owned by the role this object marked (a crash between `CREATE DATABASE` and its
 * `COMMENT`; only a superuser could have given a database to that role). The owner of a database can
 * rewrite its comment, so a mark alone is not trusted when the owner is another object's role.
 */
export function databaseRefusal(row: DatabaseRow, uid: string, role: string): string | undefined {
  if (row.template) return 'it is a template database';
  const mark = markedUid(row.comment);
  const ownerMark = markedUid(row.ownerComment);
  if (mark === uid)
    return ownerMark && ownerMark !== uid ? 'it is owned by another homeostat object’s role' : undefined;
  if (mark) return 'it belongs to another homeostat object';
  if (row.owner === role && ownerMark === uid) return undefined;
  return 'it exists and was not created by homeostat for this object';
}

/** The roles and databases homeostat created for one object, whatever its spec names now. */
export interface MarkedNames {
  /** Roles carrying the object's mark (only a CREATEROLE role can comment on a role: not forgeable). */
  readonly roles: readonly string[];
  /**
   * Databases owned by one of those roles: only homeostat gave a database to such a role (the role
   * itself has no CREATEDB, and giving a database away needs membership in the receiving role).
   */
  readonly databases: readonly string[];
}

/** Finds {@link MarkedNames} of the object with this UID. */
export async function readMarkedNames(db: Client, uid: string): Promise<MarkedNames> {
  const roles = (
    await db.query<{ name: string }>(
      `SELECT r.rolname AS name FROM pg_catalog.pg_roles r
        WHERE pg_catalog.shobj_description(r.oid, 'pg_authid') = $1 ORDER BY 1`,
      [ownerMark(uid)],
    )
  ).rows.map((r) => r.name);
  const databases = (
    await db.query<{ name: string }>(
      `SELECT d.datname AS name FROM pg_catalog.pg_database d JOIN pg_catalog.pg_roles o ON o.oid = d.datdba
        WHERE pg_catalog.shobj_description(o.oid, 'pg_authid') = $1 AND NOT d.datistemplate ORDER BY 1`,
      [ownerMark(uid)],
    )
  ).rows.map((r) => r.name);
  return { roles, databases };
}

/**
 * Why a spec naming `wanted` is refused when homeostat already created `existing` for the object: a
 * changed `databaseName` or `ownerRole` would leave the old one outside any object, so it is refused.
 */
export function renameRefusal(
  field: 'databaseName' | 'ownerRole',
  existing: readonly string[],
  wanted: string,
): string | undefined {
  const others = existing.filter((name) => name !== wanted);
  if (others.length === 0) return undefined;
  const what = field === 'databaseName' ? 'database' : 'role';
  return (
    `${field} changed to ${wanted}, but this object already has ${what} ${others.join(', ')}: ` +
    `homeostat neither renames nor abandons a ${what}; set ${field} back to ${others[0]}, ` +
    `or delete this object (its deletionPolicy applies) and create a new one`
  );
}

/**
 * Runs statements only a database's owner may run (COMMENT, CONNECTION LIMIT, GRANT, DROP). A
 * superuser admin runs them directly; a CREATEROLE admin (PostgreSQL 16+) through `SET ROLE` to the
 * owner role, which it created and granted itself SET on.
 */
export async function asOwner<T>(db: Client, facts: AdminFacts, owner: string, fn: () => Promise<T>): Promise<T> {
  if (facts.superuser) return fn();
  await db.query(`SET ROLE ${db.escapeIdentifier(owner)}`);
  try {
    return await fn();
  } finally {
    await db.query('RESET ROLE');
  }
}
