/**
 * The `PostgresDatabase` spec. Patterns, bounds, enums, defaults and the `celRule` rules go into the
 * CRD (kube-apiserver refuses a spec that breaks them); the plain `refine` rules (PostgreSQL's identifier
 * rules) are checked by homeostat and surface as phase `Invalid`.
 */
import { z } from 'zod';
import { celRule } from '../../reconcilers';

/** PostgreSQL keywords that cannot be used unquoted as names; homeostat refuses them outright. */
const reserved = new Set([
  'all',
  'analyse',
  'analyze',
  'and',
  'any',
  'array',
  'as',
  'asc',
  'both',
  'case',
  'cast',
  'check',
  'collate',
  'column',
  'constraint',
  'create',
  'default',
  'desc',
  'distinct',
  'do',
  'else',
  'end',
  'except',
  'false',
  'for',
  'foreign',
  'from',
  'grant',
  'group',
  'having',
  'in',
  'into',
  'leading',
  'limit',
  'not',
  'null',
  'offset',
  'on',
  'only',
  'or',
  'order',
  'primary',
  'public',
  'references',
  'select',
  'table',
  'then',
  'to',
  'true',
  'union',
  'unique',
  'user',
  'using',
  'when',
  'where',
  'with',
  'postgres',
  'template0',
  'template1',
]);

/** A PostgreSQL identifier homeostat manages: lowercase, at most 63 bytes, not reserved. */
function pgIdentifier(what: string) {
  return z
    .string()
    .min(1)
    .max(128)
    .regex(/^[a-z0-9_-]+$/, `${what} may contain lowercase letters, digits, '_' and '-'`)
    .refine((s) => /^[a-z_]/.test(s), {
      message: `${what} must start with a letter or '_' (PostgreSQL identifier rules)`,
    })
    .refine((s) => Buffer.byteLength(s) <= 63, {
      message: `${what} must be at most 63 bytes (PostgreSQL truncates longer names)`,
    })
    .refine((s) => !reserved.has(s), { message: `${what} must not be a reserved word or a system name` })
    .refine((s) => !s.startsWith('pg_'), {
      message: `${what} must not start with 'pg_' (reserved for system objects)`,
    });
}

/** The spec schema of `PostgresDatabase`. */
export const postgresDatabaseSpec = z.object({
  serverRef: z
    .object({
      name: z
        .string()
        .min(1)
        .max(253)
        .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'serverRef.name is the name of a PostgresServer')
        .describe('The name of the PostgresServer.'),
    })
    .describe(
      "The PostgresServer (cluster-scoped) the database lives on. Its namespaceSelector must select this object's namespace; its admin credentials stay in homeostat's own namespace.",
    ),
  databaseName: pgIdentifier('databaseName').describe(
    'The database to create. homeostat refuses one that exists and that it did not create for this object. Fixed once the database exists: a new name is refused (the object is Degraded until the name is set back), never a second database.',
  ),
  ownerRole: pgIdentifier('ownerRole').describe(
    'The role that owns the database; its password is generated and kept in the connection Secret. homeostat refuses a role that exists and that it did not create for this object. Fixed once the role exists: a new name is refused (the object is Degraded until the name is set back), never a second role.',
  ),
  connectionLimit: z
    .number()
    .int()
    .min(-1)
    .max(10000)
    .optional()
    .describe(
      "The most connections the database, and its owner role on any database, accept at once. Unset or -1: the PostgresServer's default (spec.connectionLimits.default); never more than the server's ceiling (spec.connectionLimits.ceiling), to which a larger value is lowered. status.connectionLimit shows the limit that applies.",
    ),
  extensions: celRule(
    z
      .array(
        z
          .string()
          .min(1)
          .max(128)
          .regex(/^[a-zA-Z0-9_-]+$/)
          .refine((s) => /^[a-z_][a-z0-9_-]*$/.test(s), {
            message: 'extension names are lowercase and start with a letter or _',
          })
          .refine((s) => Buffer.byteLength(s) <= 63, { message: 'extension names are at most 63 bytes' })
          .describe('An extension name.'),
      )
      .max(32),
    { rule: 'self.all(e, self.exists_one(f, f == e))', message: 'extensions must not be listed twice' },
    (extensions) => new Set(extensions).size === extensions.length,
  )
    .default([])
    .describe(
      "Extensions created in the database's extensions schema; each must be on the server's allow-list (PostgresServer spec.extensions).",
    ),
  deletionPolicy: z
    .enum(['Retain', 'Delete'])
    .default('Retain')
    .describe(
      'What deleting this object does: Retain keeps the database and role, Delete drops them (only if homeostat created them for this object).',
    ),
  connectionSecretName: z
    .string()
    .min(1)
    .max(253)
    .optional()
    .describe('The name of the connection Secret this object owns (default: <metadata.name>-connection).'),
});

/** A parsed `PostgresDatabase` spec. */
export type PostgresDatabaseSpec = z.output<typeof postgresDatabaseSpec>;
