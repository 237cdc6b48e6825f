/**
 * The `PostgresServer` spec: a cluster-scoped PostgreSQL server that `PostgresDatabase` objects name.
 * Its admin credentials live in a Secret in homeostat's own namespace, never in a tenant's; a namespace
 * label selector says which namespaces may use it; an allow-list says which extensions they may ask for.
 */
import { z } from 'zod';
import { celRule } from '../../reconcilers';

const labelKey = z
  .string()
  .min(1)
  .max(317)
  .regex(/^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/, 'a label key');
const labelValue = z
  .string()
  .max(63)
  .regex(/^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/, 'a label value');

/** A Kubernetes `metav1.LabelSelector`: `{}` selects every namespace. */
export const namespaceSelectorSchema = z.object({
  // Keys are not pattern-checked here: a CEL rule over every key of an unbounded map exceeds the API
  // server's cost budget, and a key that is not a label key simply matches no namespace.
  matchLabels: z
    .record(z.string(), labelValue)
    .optional()
    .describe(
      'Labels a namespace must carry, each with this value (all of them: they are ANDed with matchExpressions).',
    ),
  matchExpressions: z
    .array(
      z.object({
        key: labelKey.describe('The label key the requirement is about.'),
        operator: z
          .enum(['In', 'NotIn', 'Exists', 'DoesNotExist'])
          .describe("How the label's value relates to values: In, NotIn, Exists or DoesNotExist."),
        values: z
          .array(labelValue)
          .max(64)
          .optional()
          .describe('The values In and NotIn compare with; empty for Exists and DoesNotExist.'),
      }),
    )
    .max(32)
    .optional()
    .describe('Label requirements a namespace must meet (all of them).'),
});

/** A parsed label selector. */
export type NamespaceSelector = z.output<typeof namespaceSelectorSchema>;

/** Whether `labels` match `selector`, with the API server's semantics (`{}` matches everything). */
export function selectorMatches(selector: NamespaceSelector, labels: Readonly<Record<string, string>>): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (labels[key] !== value) return false;
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, key);
    const ok =
      operator === 'Exists'
        ? has
        : operator === 'DoesNotExist'
          ? !has
          : operator === 'In'
            ? has && values.includes(labels[key]!)
            : !has || !values.includes(labels[key]!);
    if (!ok) return false;
  }
  return true;
}

/** An extension name as PostgreSQL has them: lowercase, at most 63 bytes. */
export const extensionName = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z_][a-z0-9_-]*$/, 'extension names are lowercase and start with a letter or _');

/** One connection limit of a server: a positive count, unset for the computed value. */
const connectionLimit = (description: string) => z.number().int().min(1).max(10000).optional().describe(description);

/**
 * The connection limits a server gives each `PostgresDatabase` (its database and its owner role alike).
 * Unset values follow the server's own `max_connections`; see `docs/postgres.md`.
 */
export const connectionLimitsSchema = celRule(
  z.object({
    default: connectionLimit(
      'The connection limit of a PostgresDatabase that sets none (or sets -1). Default: a tenth of the connections open to ordinary roles (max_connections minus superuser_reserved_connections and reserved_connections), at least 1, and never above the ceiling.',
    ),
    ceiling: connectionLimit(
      'The most connections any one PostgresDatabase (its database, and its owner role on every database) may have; a larger connectionLimit is lowered to it. Default: a quarter of the connections open to ordinary roles, at least 1.',
    ),
  }),
  {
    rule: '!has(self.default) || !has(self.ceiling) || self.default <= self.ceiling',
    message: 'connectionLimits.default must not exceed connectionLimits.ceiling',
    fieldPath: '.default',
  },
  (v) => v.default === undefined || v.ceiling === undefined || v.default <= v.ceiling,
);

/** The spec schema of `PostgresServer`. */
export const postgresServerSpec = z.object({
  adminSecretRef: z
    .object({
      name: z.string().min(1).max(253).describe("The Secret's name, in homeostat's own namespace."),
      key: z.string().min(1).max(253).default('url').describe('The key of the Secret that holds the postgres:// URL.'),
    })
    .describe(
      "The admin connection: a Secret in homeostat's own namespace (HOMEOSTAT_SYSTEM_NAMESPACE, default homeostat-system) whose key holds a postgres:// URL (its sslmode is honoured) and whose optional ca.crt holds the CA that signs the server's certificate. The admin role may be a superuser, or (PostgreSQL 16+) a role with CREATEROLE and CREATEDB, which then manages only the roles it created.",
    ),
  namespaceSelector: namespaceSelectorSchema.describe(
    'The namespaces whose PostgresDatabase objects may use this server; {} selects every namespace.',
  ),
  extensions: z
    .array(extensionName.describe('An extension name.'))
    .max(64)
    .default([])
    .describe('The extensions a PostgresDatabase on this server may ask for.'),
  connectionLimits: connectionLimitsSchema
    .default({})
    .describe(
      "Connection limits for the databases and roles of PostgresDatabase objects on this server, so that no tenant can take every connection: each object's database and owner role get the object's connectionLimit, the default when it sets none, and never more than the ceiling.",
    ),
  approvals: z
    .object({
      dropDatabases: z
        .boolean()
        .default(false)
        .describe(
          'Dropping a database (a PostgresDatabase with deletionPolicy Delete being deleted) waits, phase AwaitingApproval, until a caller with the RBAC verb approve approves it (POST …/approve, homeostat approve).',
        ),
      lowerConnectionLimits: z
        .boolean()
        .default(false)
        .describe(
          "Lowering a PostgresDatabase's connection limit (its spec.connectionLimit, or this server's default or ceiling, going down) waits, phase AwaitingApproval, with the limit unchanged, until a caller with the RBAC verb approve approves it. Raising it does not wait.",
        ),
    })
    .default({ dropDatabases: false, lowerConnectionLimits: false })
    .describe('Changes to the databases on this server that wait for a person’s approval. Off by default.'),
});

/** A parsed `PostgresServer` spec. */
export type PostgresServerSpec = z.output<typeof postgresServerSpec>;
