/**
 * `Queuee`s (the queued test operator's kind, test/fixtures/operators/queued.ts) in a test's
 * namespace: created, and waited for until every one is Ready.
 */
import type * as k8s from '@kubernetes/client-node';
import { eventually } from './eventually';
import type { TestStack } from './harness';

const api = { group: 'queued.homeostat.dev', version: 'v1alpha1', plural: 'queuees' } as const;

/** Creates a `Queuee` per name, with the annotations `annotationsOf` gives it (if any). */
export async function createQueuees(
  t: TestStack,
  names: readonly string[],
  annotationsOf: (name: string) => Record<string, string> | undefined = () => undefined,
): Promise<void> {
  for (const name of names) {
    const annotations = annotationsOf(name);
    const metadata: k8s.V1ObjectMeta = annotations ? { name, annotations } : { name };
    await t.custom.createNamespacedCustomObject({
      ...api,
      namespace: t.namespace,
      body: { apiVersion: `${api.group}/${api.version}`, kind: 'Queuee', metadata, spec: {} },
    });
  }
}

/** Waits (up to 3 minutes) until every named `Queuee` shows phase Ready. */
export async function waitQueueesReady(t: TestStack, names: readonly string[]): Promise<void> {
  const phaseOf = async (name: string): Promise<string | undefined> =>
    (
      (await t.custom.getNamespacedCustomObject({ ...api, namespace: t.namespace, name })) as {
        status?: { phase?: string };
      }
    ).status?.phase;
  await eventually(
    'every object Ready',
    () => Promise.all(names.map(phaseOf)),
    (ps) => ps.every((p) => p === 'Ready'),
    180_000,
  );
}
