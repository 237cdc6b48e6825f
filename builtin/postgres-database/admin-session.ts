/**
 * A short-lived admin session for one `PostgresDatabase` step: the server the object names (checked
 * against its `namespaceSelector`), a connection with the admin credentials, the admin's rights, and
 * the server's connection limits. Every step opens its own and closes it, whatever happens.
 */
import type { Client } from 'pg';
import { terminal, type StepContext } from '../../reconcilers';
import { connect } from './connection';
import { connectionLimitsFor, readConnectionSettings, type ConnectionLimits } from './connection-limits';
import { fromPostgresError } from './errors';
import type { PostgresDatabaseSpec } from './schema';
import { adminFacts, adminProblem, resolveServer, type AdminFacts, type ResolvedServer } from './server';

/** What a step gets on an admin session. */
export interface AdminSession {
  readonly db: Client;
  readonly facts: AdminFacts;
  readonly server: ResolvedServer;
  /** The server's limits for each database and role (read from the server on every session). */
  readonly limits: ConnectionLimits;
}

/** Options of {@link withAdmin}. */
export interface AdminSessionOptions {
  /** Connect to this database. @default the admin URL's database */
  readonly database?: string;
  /** Check that the server selects the object's namespace (cleanup skips it). @default true */
  readonly checkNamespace?: boolean;
  /** A read-only session (a dry run's preview: catalog reads only, no DDL can run). @default false */
  readonly readOnly?: boolean;
}

/**
 * Runs `fn` on an admin session of the object's server; a PostgreSQL error becomes a catalog error
 * naming `what`.
 */
export async function withAdmin<T>(
  ctx: StepContext<PostgresDatabaseSpec>,
  systemNamespace: string,
  what: string,
  fn: (session: AdminSession) => Promise<T>,
  options: AdminSessionOptions = {},
): Promise<T> {
  const server = await resolveServer(ctx, ctx.spec.serverRef.name, ctx.object.namespace ?? '', systemNamespace, {
    checkNamespace: options.checkNamespace ?? true,
  });
  let db: Client | undefined;
  try {
    db = await connect(server.address, {
      ...(options.database ? { database: options.database } : {}),
      ...(options.readOnly ? { readOnly: true } : {}),
    });
    // A role setting a database owner attached to their database (ALTER DATABASE … SET role) is undone.
    await db.query('SET ROLE NONE');
    const facts = await adminFacts(db);
    const problem = adminProblem(facts);
    if (problem) throw terminal(new Error(`PostgresServer ${server.name}: ${problem}`));
    const limits = connectionLimitsFor(server.spec.connectionLimits, await readConnectionSettings(db));
    return await fn({ db, facts, server, limits });
  } catch (err) {
    throw fromPostgresError(err, what);
  } finally {
    await db?.end().catch(() => {});
  }
}
