/**
 * Resolving a `PostgresServer` for a step: the server object, whether the asking object's namespace is
 * selected, and the admin address from the Secret in homeostat's own namespace. A tenant names a
 * server, never a Secret: the admin URL is read only here, by the worker, and never written anywhere
 * a tenant can read.
 */
import type { V1Namespace, V1Secret } from '@kubernetes/client-node';
import type { Client } from 'pg';
import { adoptionRefused, HomeostatError, type StepContext } from '../../reconcilers';
import { parseServerUrl, type ServerAddress } from './connection';
import { postgresServerSpec, selectorMatches, type PostgresServerSpec } from './server-schema';

/** Where homeostat runs when nothing says otherwise (the namespace of `deploy/`). */
export const defaultSystemNamespace = 'homeostat-system';

/** Options of the PostgreSQL reconcilers. */
export interface PostgresOptions {
  /**
   * homeostat's own namespace: the only one admin Secrets of `PostgresServer`s are read from.
   * @default 'homeostat-system'
   */
  readonly systemNamespace?: string;
}

const decode = (secret: V1Secret | undefined, key: string): string | undefined => {
  const value = secret?.data?.[key];
  return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
};

/** Reads the admin address of a server from its Secret in the system namespace. */
export async function adminAddress(
  ctx: Pick<StepContext<unknown>, 'read'>,
  serverName: string,
  spec: PostgresServerSpec,
  systemNamespace: string,
): Promise<ServerAddress> {
  const ref = spec.adminSecretRef;
  const where = `PostgresServer ${serverName}: admin Secret ${systemNamespace}/${ref.name}`;
  const secret = await ctx.read<V1Secret>({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: ref.name, namespace: systemNamespace },
  });
  if (!secret) throw new HomeostatError('ERR_STEP_FAILED', `${where} not found`);
  const url = decode(secret, ref.key);
  if (!url) throw new HomeostatError('ERR_STEP_FAILED', `${where} has no key ${ref.key}`);
  return parseServerUrl(url, `${where} key ${ref.key}`, decode(secret, 'ca.crt'));
}

/** A server resolved for a namespaced object. */
export interface ResolvedServer {
  readonly name: string;
  readonly spec: PostgresServerSpec;
  readonly address: ServerAddress;
}

/**
 * The server `serverName` for an object in `namespace`: refused (`AdoptionRefused`, re-checked at the
 * drift interval) when the server's `namespaceSelector` does not select that namespace (unless
 * `checkNamespace` is false).
 */
export async function resolveServer(
  ctx: Pick<StepContext<unknown>, 'read'>,
  serverName: string,
  namespace: string,
  systemNamespace: string,
  options: { checkNamespace?: boolean } = {},
): Promise<ResolvedServer> {
  const server = await ctx.read<{ apiVersion: string; kind: string; spec?: unknown }>({
    apiVersion: 'homeostat.dev/v1alpha1',
    kind: 'PostgresServer',
    metadata: { name: serverName },
  });
  if (!server) throw new HomeostatError('ERR_STEP_FAILED', `PostgresServer ${serverName} not found`);
  const parsed = postgresServerSpec.safeParse(server.spec);
  if (!parsed.success) {
    throw new HomeostatError('ERR_STEP_FAILED', `PostgresServer ${serverName} has an invalid spec`);
  }
  // Cleanup skips the check: it drops only what this object created, which its namespace was once allowed to.
  if (options.checkNamespace !== false) {
    const ns = await ctx.read<V1Namespace>({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    if (!selectorMatches(parsed.data.namespaceSelector, ns?.metadata?.labels ?? {})) {
      throw adoptionRefused(
        `PostgresServer ${serverName}`,
        `namespace ${namespace} is not selected by its namespaceSelector (ServerNotAllowed)`,
      );
    }
  }
  return {
    name: serverName,
    spec: parsed.data,
    address: await adminAddress(ctx, serverName, parsed.data, systemNamespace),
  };
}

/** What the admin role may do, read from the server. */
export interface AdminFacts {
  readonly user: string;
  readonly superuser: boolean;
  readonly createrole: boolean;
  readonly createdb: boolean;
  /** `server_version_num`, e.g. 180004. */
  readonly version: number;
}

/** Reads {@link AdminFacts} over an open admin connection. */
export async function adminFacts(db: Client): Promise<AdminFacts> {
  const row = (
    await db.query<{ user: string; superuser: boolean; createrole: boolean; createdb: boolean; version: string }>(
      `SELECT r.rolname AS user, r.rolsuper AS superuser, r.rolcreaterole AS createrole, r.rolcreatedb AS createdb,
              current_setting('server_version_num') AS version
         FROM pg_catalog.pg_roles r WHERE r.rolname = current_user`,
    )
  ).rows[0];
  if (!row) throw new HomeostatError('ERR_STEP_FAILED', 'the admin role is not in pg_roles');
  return { ...row, version: Number(row.version) };
}

/**
 * Why an admin cannot manage databases, or `undefined` when it can: a superuser, or on PostgreSQL 16+
 * a role with CREATEROLE and CREATEDB (which then manages only the roles it created).
 */
export function adminProblem(facts: AdminFacts): string | undefined {
  if (facts.superuser) return undefined;
  if (!facts.createrole || !facts.createdb) {
    return `admin role ${facts.user} is neither a superuser nor a role with CREATEROLE and CREATEDB`;
  }
  if (facts.version < 160000) {
    return `admin role ${facts.user} is not a superuser: a CREATEROLE admin needs PostgreSQL 16 or newer`;
  }
  return undefined;
}
