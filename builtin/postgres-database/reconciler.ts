/**
 * The `PostgresDatabase` reconciler: a database and its owner role on a real PostgreSQL server named
 * by a Secret, kept in line with the spec. Every step is idempotent and re-reads what it needs, so a
 * worker killed mid-step is harmless: the role's password lives only in the connection Secret (owned
 * by the object) and the `role` step sets it on every pass, so the Secret's password always works.
 */
import { randomBytes } from 'node:crypto';
import type { V1Secret } from '@kubernetes/client-node';
import { Client, type ClientConfig } from 'pg';
import { HomeostatError, isHomeostatError } from '../../reconcilers';
import { defineReconciler, type CrdOptions, type ReferenceWatch, type StepContext } from '../../reconcilers';
import { postgresDatabasePlan } from './plan';
import { postgresDatabaseSpec, type PostgresDatabaseSpec } from './schema';

type Ctx = StepContext<PostgresDatabaseSpec>;

/** Name of the connection Secret of an object. */
export function connectionSecretName(ctx: Pick<Ctx, 'spec' | 'object'>): string {
  return ctx.spec.connectionSecretName ?? `${ctx.object.name}-connection`;
}

const decode = (secret: V1Secret | undefined, key: string): string | undefined => {
  const value = secret?.data?.[key];
  return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
};

/** SQLSTATE classes and Node error codes that mean "the server is not reachable right now". */
const unavailable = /^(08|57P0[1-3]|53300)/;
const networkCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
  'EAI_AGAIN',
]);

/** Maps a `pg` error to homeostat's catalog: unreachable → retryable, unsupported extension → terminal. */
export function fromPostgresError(err: unknown, what: string): HomeostatError {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  const message = `${what}: ${typeof e.message === 'string' ? e.message : String(err)}`;
  if (networkCodes.has(code) || unavailable.test(code) || /Connection terminated|timeout/i.test(message)) {
    return new HomeostatError('ERR_NETWORK', `PostgreSQL unreachable: ${message}`, { cause: err });
  }
  if (code === '0A000' || code === '58P01' || code === '42704') {
    return new HomeostatError('ERR_STEP_TERMINAL', message, { cause: err });
  }
  return new HomeostatError('ERR_STEP_FAILED', message, { cause: err });
}

/** Reads the admin URL from the server Secret (referenced, not owned: see `references`). */
async function adminUrl(ctx: Ctx): Promise<URL> {
  const ref = ctx.spec.serverSecretRef;
  const secret = await ctx.read<V1Secret>({ apiVersion: 'v1', kind: 'Secret', metadata: { name: ref.name } });
  const url = decode(secret, ref.key);
  if (!secret) throw new HomeostatError('ERR_STEP_FAILED', `server Secret ${ref.name} not found`);
  if (!url) throw new HomeostatError('ERR_STEP_FAILED', `server Secret ${ref.name} has no key ${ref.key}`);
  try {
    return new URL(url);
  } catch (err) {
    throw new HomeostatError('ERR_STEP_TERMINAL', `server Secret ${ref.name} key ${ref.key} is not a URL`, {
      cause: err,
    });
  }
}

/** Runs `fn` with a short-lived connection to `database` (default: the admin URL's database). */
async function withAdmin<T>(ctx: Ctx, what: string, fn: (client: Client) => Promise<T>, database?: string): Promise<T> {
  const url = await adminUrl(ctx);
  if (database) url.pathname = `/${database}`;
  const config: ClientConfig = {
    connectionString: url.toString(),
    connectionTimeoutMillis: 5000,
    query_timeout: 30_000,
  };
  const client = new Client(config);
  client.on('error', () => {}); // a dropped connection surfaces through the pending query
  try {
    await client.connect();
    return await fn(client);
  } catch (err) {
    if (isHomeostatError(err)) throw err;
    throw fromPostgresError(err, what);
  } finally {
    await client.end().catch(() => {});
  }
}

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

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

/** CRD extras of `PostgresDatabase`. */
const postgresDatabaseCrdOptions: CrdOptions = {
  shortNames: ['pgdb'],
  columns: [
    { name: 'Database', type: 'string', jsonPath: '.spec.databaseName' },
    { name: 'Policy', type: 'string', jsonPath: '.spec.deletionPolicy', priority: 1 },
  ],
};

/**
 * The server Secret an object names, read from its stored (not yet validated) spec: a change to that
 * Secret (a rotated admin password, a moved server) re-reconciles every database that uses it.
 */
const serverSecretReference: ReferenceWatch = {
  apiVersion: 'v1',
  kind: 'Secret',
  referencedBy: (object) => {
    const name = (object.spec as { serverSecretRef?: { name?: unknown } } | undefined)?.serverSecretRef?.name;
    return typeof name === 'string' && name !== '' ? [{ name }] : [];
  },
};

/** The `PostgresDatabase` reconciler. */
export const postgresDatabaseReconciler = defineReconciler({
  crd: postgresDatabaseCrdOptions,
  references: [serverSecretReference],
  plan: postgresDatabasePlan,
  schema: postgresDatabaseSpec,
  steps: {
    async credentials(ctx) {
      const name = connectionSecretName(ctx);
      const existing = await ctx.children.read<V1Secret>({ apiVersion: 'v1', kind: 'Secret', metadata: { name } });
      if (decode(existing, 'password')) return { message: 'password present' };
      // 24 random bytes from the operating system's CSPRNG; kept only in this Secret.
      const password = randomBytes(24).toString('base64url');
      await ctx.children.apply<V1Secret>({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name, labels: { 'app.kubernetes.io/managed-by': 'homeostat' } },
        type: 'Opaque',
        data: { password: b64(password) },
      });
      return { message: 'password generated' };
    },

    async role(ctx) {
      const password = await readPassword(ctx);
      const role = ctx.spec.ownerRole;
      return withAdmin(ctx, `ensure role ${role}`, async (db) => {
        const exists = (await db.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role])).rowCount === 1;
        const ident = db.escapeIdentifier(role);
        if (!exists) {
          try {
            await db.query(`CREATE ROLE ${ident} LOGIN PASSWORD ${db.escapeLiteral(password)}`);
            return { message: `role ${role} created` };
          } catch (err) {
            if ((err as { code?: string }).code !== '42710') throw err; // created concurrently: fall through
          }
        }
        await db.query(`ALTER ROLE ${ident} WITH LOGIN PASSWORD ${db.escapeLiteral(password)}`);
        return { message: `role ${role} present` };
      });
    },

    async database(ctx) {
      const { databaseName: name, ownerRole: owner, connectionLimit: limit } = ctx.spec;
      return withAdmin(ctx, `ensure database ${name}`, async (db) => {
        const ident = db.escapeIdentifier(name);
        const found = await db.query<{ owner: string; limit: number }>(
          'SELECT r.rolname AS owner, d.datconnlimit AS limit FROM pg_database d JOIN pg_roles r ON r.oid = d.datdba WHERE d.datname = $1',
          [name],
        );
        const row = found.rows[0];
        if (!row) {
          try {
            await db.query(`CREATE DATABASE ${ident} OWNER ${db.escapeIdentifier(owner)} CONNECTION LIMIT ${limit}`);
            return { message: `database ${name} created` };
          } catch (err) {
            if ((err as { code?: string }).code !== '42P04') throw err; // created concurrently
          }
        }
        const fixed: string[] = [];
        if (row && row.owner !== owner) {
          await db.query(`ALTER DATABASE ${ident} OWNER TO ${db.escapeIdentifier(owner)}`);
          fixed.push(`owner ${row.owner} → ${owner}`);
        }
        if (row && row.limit !== limit) {
          await db.query(`ALTER DATABASE ${ident} CONNECTION LIMIT ${limit}`);
          fixed.push(`connection limit ${row.limit} → ${limit}`);
        }
        if (fixed.length) ctx.log.info({ database: name, fixed }, 'database drift corrected');
        return { message: fixed.length ? `corrected ${fixed.join(', ')}` : `database ${name} in line` };
      });
    },

    async extensions(ctx) {
      const { extensions, databaseName } = ctx.spec;
      if (extensions.length === 0) return { message: 'no extensions' };
      return withAdmin(
        ctx,
        `ensure extensions in ${databaseName}`,
        async (db) => {
          for (const ext of extensions) await db.query(`CREATE EXTENSION IF NOT EXISTS ${db.escapeIdentifier(ext)}`);
          return { message: `extensions ${extensions.join(', ')}` };
        },
        databaseName,
      );
    },

    async 'connection-secret'(ctx) {
      const server = await adminUrl(ctx);
      const password = await readPassword(ctx);
      const { databaseName: database, ownerRole: user } = ctx.spec;
      const host = server.hostname;
      const port = server.port || '5432';
      const url = `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@${host}:${port}/${database}`;
      await ctx.children.apply<V1Secret>({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: connectionSecretName(ctx), labels: { 'app.kubernetes.io/managed-by': 'homeostat' } },
        type: 'Opaque',
        data: {
          host: b64(host),
          port: b64(port),
          database: b64(database),
          user: b64(user),
          password: b64(password),
          url: b64(url),
        },
      });
      return { message: `Secret ${connectionSecretName(ctx)} written` };
    },
  },
  cleanup: {
    async drop(ctx) {
      if (ctx.spec.deletionPolicy === 'Retain') return { message: 'deletionPolicy Retain: database and role kept' };
      const { databaseName, ownerRole } = ctx.spec;
      return withAdmin(ctx, `drop database ${databaseName} and role ${ownerRole}`, async (db) => {
        await db.query(`DROP DATABASE IF EXISTS ${db.escapeIdentifier(databaseName)} WITH (FORCE)`);
        await db.query(`DROP ROLE IF EXISTS ${db.escapeIdentifier(ownerRole)}`);
        return { message: `dropped database ${databaseName} and role ${ownerRole}` };
      });
    },
  },
});
