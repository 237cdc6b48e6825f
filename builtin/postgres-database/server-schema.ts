/**
 * The `PostgresServer` spec: a cluster-scoped PostgreSQL server that `PostgresDatabase` objects name.
 * Its admin credentials live in a Secret in homeostat's own namespace, never in a tenant's; a namespace
 * label selector says which namespaces may use it; an allow-list says which extensions they may ask for.
 */
import { z } from 'zod';

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
  /**
   * Every label listed must be present with this value. Keys are not pattern-checked here: a CEL rule
   * over every key of an unbounded map exceeds the API server's cost budget, and a key that is not a
   * label key simply matches no namespace.
   */
  matchLabels: z.record(z.string(), labelValue).optional(),
  /** Every requirement must hold. */
  matchExpressions: z
    .array(
      z.object({
        key: labelKey,
        operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']),
        values: z.array(labelValue).max(64).optional(),
      }),
    )
    .max(32)
    .optional(),
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

/** The spec schema of `PostgresServer`. */
export const postgresServerSpec = z.object({
  /**
   * The admin connection: a Secret in homeostat's own namespace (HOMEOSTAT_SYSTEM_NAMESPACE, default
   * `homeostat-system`) whose `key` holds a `postgres://` URL (its `sslmode` is honoured) and whose
   * optional `ca.crt` holds the CA that signs the server's certificate. The admin role may be a
   * superuser, or (PostgreSQL 16+) a role with CREATEROLE and CREATEDB, which then manages only the
   * roles it created.
   */
  adminSecretRef: z.object({
    name: z.string().min(1).max(253),
    /** @default 'url' */
    key: z.string().min(1).max(253).default('url'),
  }),
  /** The namespaces whose `PostgresDatabase` objects may use this server; `{}` selects every namespace. */
  namespaceSelector: namespaceSelectorSchema,
  /** The extensions a `PostgresDatabase` on this server may ask for. @default [] */
  extensions: z.array(extensionName).max(64).default([]),
});

/** A parsed `PostgresServer` spec. */
export type PostgresServerSpec = z.output<typeof postgresServerSpec>;
