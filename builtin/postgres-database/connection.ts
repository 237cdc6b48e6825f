/**
 * Connections to a PostgreSQL server from a URL: `sslmode` as libpq defines it (node-postgres' own
 * parsing treats `require` as `verify-full` and has no `prefer`), a CA certificate from the admin
 * Secret, short timeouts, and a `search_path` pinned at connection start so that settings a database
 * owner attached to their database (`ALTER DATABASE … SET search_path`) cannot steer the admin's
 * statements to the owner's objects.
 */
import type { ConnectionOptions } from 'node:tls';
import { Client, type ClientConfig } from 'pg';
import { HomeostatError, terminal } from '../../reconcilers';

/** libpq's `sslmode` values. */
export const sslModes = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;
/** One of {@link sslModes}. */
export type SslMode = (typeof sslModes)[number];

/** Where and how to connect: the pieces of a PostgreSQL URL homeostat uses. */
export interface ServerAddress {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password: string;
  readonly database: string;
  /** From the URL's `sslmode`; libpq's default is `prefer`. */
  readonly sslmode: SslMode;
  /** A PEM CA bundle to verify the server's certificate with (`verify-ca`, `verify-full`, `require`). */
  readonly ca?: string;
}

/** Parses a `postgres://` URL; a malformed URL or an unknown `sslmode` is a terminal error. */
export function parseServerUrl(text: string, what: string, ca?: string): ServerAddress {
  let url: URL;
  try {
    url = new URL(text);
  } catch (err) {
    throw new HomeostatError('ERR_STEP_TERMINAL', `${what} is not a URL`, { cause: err });
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw terminal(new Error(`${what} is not a postgres:// URL`));
  }
  const mode = url.searchParams.get('sslmode') ?? 'prefer';
  if (!(sslModes as readonly string[]).includes(mode)) {
    throw terminal(new Error(`${what}: unknown sslmode ${JSON.stringify(mode)} (one of ${sslModes.join(', ')})`));
  }
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port ? Number(url.port) : 5432,
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    database: decodeURIComponent(url.pathname.replace(/^\//, '')) || 'postgres',
    sslmode: mode as SslMode,
    ...(ca ? { ca } : {}),
  };
}

/**
 * The TLS options of node-postgres for an sslmode, as libpq means it: `disable`/`allow` plain (allow's
 * fallback to TLS is not offered), `prefer` TLS without verification (with a fallback to plain, see
 * {@link connect}), `require` TLS without verification unless a CA is given (then as `verify-ca`),
 * `verify-ca` the chain only, `verify-full` the chain and the host name.
 */
export function tlsOptionsFor(mode: SslMode, ca?: string): false | ConnectionOptions {
  switch (mode) {
    case 'disable':
    case 'allow':
      return false;
    case 'prefer':
      return { rejectUnauthorized: false };
    case 'require':
      return ca
        ? { ca, rejectUnauthorized: true, checkServerIdentity: () => undefined }
        : { rejectUnauthorized: false };
    case 'verify-ca':
      return { ...(ca ? { ca } : {}), rejectUnauthorized: true, checkServerIdentity: () => undefined };
    case 'verify-full':
      return { ...(ca ? { ca } : {}), rejectUnauthorized: true };
  }
}

/** Options of {@link connect}. */
export interface ConnectOptions {
  /** Connect to this database instead of the address's. */
  readonly database?: string;
  /** Connect as this user with this password instead of the address's. */
  readonly login?: { readonly user: string; readonly password: string };
  /** Pin `search_path` to `pg_catalog, pg_temp` at connection start. @default true */
  readonly pinSearchPath?: boolean;
  /**
   * A read-only session (`default_transaction_read_only` set at connection start): every statement
   * that writes — DDL included — fails with `25006`. Dry runs' previews use it. @default false
   */
  readonly readOnly?: boolean;
}

/** The node-postgres configuration of an address. */
export function clientConfigFor(address: ServerAddress, options: ConnectOptions = {}): ClientConfig {
  const ssl = tlsOptionsFor(address.sslmode, address.ca);
  const startupOptions = [
    ...(options.pinSearchPath === false ? [] : ['-c search_path=pg_catalog,pg_temp']),
    ...(options.readOnly === true ? ['-c default_transaction_read_only=on'] : []),
  ];
  return {
    host: address.host,
    port: address.port,
    user: options.login?.user ?? address.user,
    password: options.login?.password ?? address.password,
    database: options.database ?? address.database,
    ssl,
    connectionTimeoutMillis: 5000,
    query_timeout: 30_000,
    // Startup options outrank per-database and per-role settings (ALTER DATABASE/ROLE … SET), which a
    // database owner controls; pg_temp last so a temporary object can never shadow a catalog one.
    ...(startupOptions.length > 0 ? { options: startupOptions.join(' ') } : {}),
  };
}

/**
 * Opens a connection; with `sslmode=prefer` a server without TLS is retried in plain text, as libpq
 * does. The caller ends the client.
 */
export async function connect(address: ServerAddress, options: ConnectOptions = {}): Promise<Client> {
  const open = async (config: ClientConfig): Promise<Client> => {
    const client = new Client(config);
    client.on('error', () => {}); // a dropped connection surfaces through the pending query
    try {
      await client.connect();
      return client;
    } catch (err) {
      await client.end().catch(() => {});
      throw err;
    }
  };
  const config = clientConfigFor(address, options);
  try {
    return await open(config);
  } catch (err) {
    if (address.sslmode === 'prefer' && /does not support SSL/i.test(String((err as Error).message))) {
      return open({ ...config, ssl: false });
    }
    throw err;
  }
}

/** The URL a tenant's application uses: its own role, its database, and the server's sslmode. */
export function tenantUrl(address: ServerAddress, user: string, password: string, database: string): string {
  const query = address.sslmode === 'prefer' ? '' : `?sslmode=${address.sslmode}`;
  const host = address.host.includes(':') ? `[${address.host}]` : address.host;
  return `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@${host}:${address.port}/${encodeURIComponent(database)}${query}`;
}
