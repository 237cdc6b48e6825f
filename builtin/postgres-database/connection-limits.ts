/**
 * Connection limits on a shared server: what a `PostgresServer` allows each `PostgresDatabase` (a
 * default and a ceiling, from its spec or from the server's own `max_connections`), and the limit one
 * object gets. The limit goes on the object's database and on its owner role, so a tenant's role cannot
 * hold more than it, on any database; the connections reserved for superusers
 * (`superuser_reserved_connections`) and for `pg_use_reserved_connections` (`reserved_connections`,
 * PostgreSQL 16+) are never open to a tenant. See `docs/postgres.md` for what this does not guarantee.
 */
import type { Client } from 'pg';
import type { PostgresServerSpec } from './server-schema';

/** The server settings the limits follow. */
export interface ConnectionSettings {
  /** `max_connections`. */
  readonly maxConnections: number;
  /** `superuser_reserved_connections`. */
  readonly superuserReserved: number;
  /** `reserved_connections` (PostgreSQL 16+; 0 before). */
  readonly reserved: number;
}

/** Reads {@link ConnectionSettings} over an open connection. */
export async function readConnectionSettings(db: Client): Promise<ConnectionSettings> {
  const row = (
    await db.query<{ max: string; su: string; reserved: string | null }>(
      `SELECT current_setting('max_connections') AS max,
              current_setting('superuser_reserved_connections') AS su,
              current_setting('reserved_connections', true) AS reserved`,
    )
  ).rows[0];
  return {
    maxConnections: Number(row?.max ?? 0),
    superuserReserved: Number(row?.su ?? 0),
    reserved: Number(row?.reserved ?? 0) || 0,
  };
}

/** The limits a server gives each `PostgresDatabase`. */
export interface ConnectionLimits {
  /** Connections open to ordinary roles: `max_connections` less the reserved ones (at least 1). */
  readonly available: number;
  /** The limit of an object that asks for none (or for -1). */
  readonly default: number;
  /** The most any one object gets. */
  readonly ceiling: number;
}

/**
 * The limits of a server: its spec's `connectionLimits`, and where unset a quarter (the ceiling) and a
 * tenth (the default) of the connections open to ordinary roles; the default never exceeds the ceiling.
 */
export function connectionLimitsFor(
  spec: PostgresServerSpec['connectionLimits'] | undefined,
  settings: ConnectionSettings,
): ConnectionLimits {
  const available = Math.max(1, settings.maxConnections - settings.superuserReserved - settings.reserved);
  const ceiling = spec?.ceiling ?? Math.max(1, Math.floor(available / 4));
  const fallback = spec?.default ?? Math.max(1, Math.floor(available / 10));
  return { available, ceiling, default: Math.min(fallback, ceiling) };
}

/** The limit one object gets, and why. */
export interface AppliedLimit {
  readonly limit: number;
  /** `asked`: the object's own; `default`: it asked for none or -1; `ceiling`: it asked for more. */
  readonly source: 'asked' | 'default' | 'ceiling';
  /** One line for the step's message: `connection limit 5`, `connection limit 29 (the server's default)`. */
  readonly summary: string;
}

/**
 * The limit for an object's `connectionLimit`: unset or -1 is the server's default (never "no limit"),
 * a value above the ceiling is lowered to it, anything else is kept (0 closes the database to its role).
 */
export function appliedConnectionLimit(
  asked: number | undefined,
  limits: ConnectionLimits,
  server: string,
): AppliedLimit {
  if (asked === undefined || asked < 0) {
    return {
      limit: limits.default,
      source: 'default',
      summary: `connection limit ${limits.default} (PostgresServer ${server}'s default)`,
    };
  }
  if (asked > limits.ceiling) {
    return {
      limit: limits.ceiling,
      source: 'ceiling',
      summary: `connection limit ${limits.ceiling} (asked ${asked}; PostgresServer ${server}'s ceiling)`,
    };
  }
  return { limit: asked, source: 'asked', summary: `connection limit ${asked}` };
}
