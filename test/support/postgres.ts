/**
 * `PostgresServer` objects for tests: the admin URL in a Secret in homeostat's system namespace
 * (created when missing) and a cluster-scoped server whose selector picks the test's namespace.
 */
import { defaultSystemNamespace } from '../../builtin';
import type { TestStack } from './harness';

/** The system namespace the built-in operator reads admin Secrets from in tests. */
export const systemNamespace = defaultSystemNamespace;

/** Creates `namespace` unless it exists. */
export async function ensureNamespace(t: TestStack, namespace: string): Promise<void> {
  await t.core.createNamespace({ body: { metadata: { name: namespace } } }).catch((err: { code?: number }) => {
    if (err.code !== 409) throw err;
  });
}

/** Options of {@link createPostgresServer}. */
export interface TestServerOptions {
  /** The admin URL. @default the stack's superuser URL */
  readonly url?: string;
  /** @default only the test's namespace (by its `kubernetes.io/metadata.name` label) */
  readonly namespaceSelector?: Record<string, unknown>;
  /** @default ['pgcrypto', 'citext'] */
  readonly extensions?: readonly string[];
}

/** Creates a `PostgresServer` named `name` and its admin Secret `<name>-admin` in the system namespace. */
export async function createPostgresServer(
  t: TestStack,
  name: string,
  options: TestServerOptions = {},
): Promise<string> {
  await ensureNamespace(t, systemNamespace);
  await t.core.createNamespacedSecret({
    namespace: systemNamespace,
    body: { metadata: { name: `${name}-admin` }, stringData: { url: options.url ?? t.endpoints.postgresUrl } },
  });
  await t.custom.createClusterCustomObject({
    group: 'homeostat.dev',
    version: 'v1alpha1',
    plural: 'postgresservers',
    body: {
      apiVersion: 'homeostat.dev/v1alpha1',
      kind: 'PostgresServer',
      metadata: { name },
      spec: {
        adminSecretRef: { name: `${name}-admin` },
        namespaceSelector: options.namespaceSelector ?? {
          matchLabels: { 'kubernetes.io/metadata.name': t.namespace },
        },
        extensions: options.extensions ?? ['pgcrypto', 'citext'],
      },
    },
  });
  return name;
}
