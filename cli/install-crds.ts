/**
 * Installing an operator's generated CustomResourceDefinitions into a cluster and waiting until the API
 * server serves them: used by `homeostat dev` and by the testing entry (`homeostat/testing`).
 */
import * as k8s from '@kubernetes/client-node';
import type { Operator } from '../core/operator';
import { operatorCrds } from '../reconcilers/crd';

/** Options of {@link installOperatorCrds}. */
export interface InstallCrdsOptions {
  /** The field manager of the server-side apply. @default 'homeostat' */
  readonly fieldManager?: string;
  /** How long each CRD may take to become Established. @default 30_000 */
  readonly timeoutMs?: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Server-side applies the operator's CRDs (so a second call, from another test file or a newer
 * build, updates them instead of failing on "already exists") and waits until each one is
 * Established. Throws naming the CRD and its last conditions when one is not Established in time.
 * Returns the names of the CRDs (none for an operator of core kinds only).
 */
export async function installOperatorCrds(
  kc: k8s.KubeConfig,
  operator: Operator,
  options: InstallCrdsOptions = {},
): Promise<string[]> {
  const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
  const apiext = kc.makeApiClient(k8s.ApiextensionsV1Api);
  // The client serializes a CRD through its typed model, which knows `x-kubernetes-validations` and
  // `default` only under their TypeScript names (`xKubernetesValidations`, `_default`): loading the
  // generated CRD as YAML renames them, so the apply keeps them.
  const crds = Object.values(operatorCrds(operator)).map((c) => k8s.loadYaml<k8s.KubernetesObject>(JSON.stringify(c)));
  const fieldManager = options.fieldManager ?? 'homeostat';
  for (const crd of crds) {
    await objects.patch(crd, undefined, undefined, fieldManager, true, k8s.PatchStrategy.ServerSideApply);
  }
  const names = crds.map((c) => c.metadata?.name ?? '');
  const timeoutMs = options.timeoutMs ?? 30_000;
  for (const name of names) {
    let conditions: k8s.V1CustomResourceDefinitionCondition[] = [];
    for (const deadline = Date.now() + timeoutMs; ; await sleep(100)) {
      conditions = (await apiext.readCustomResourceDefinition({ name })).status?.conditions ?? [];
      if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) {
        const seen = conditions.map((c) => `${c.type}=${c.status}${c.message ? ` (${c.message})` : ''}`).join(', ');
        throw new Error(`CRD ${name} not Established after ${timeoutMs} ms (conditions: ${seen || 'none'})`);
      }
    }
  }
  return names;
}
