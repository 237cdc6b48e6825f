/**
 * The status write both baselines make: one merge patch of the status subresource with
 * `observedGeneration`, phase `Ready` and a `Ready` condition — the shape homeostat writes, without
 * homeostat's read-before-write, resourceVersion precondition, per-step conditions and Event.
 */
import * as k8s from '@kubernetes/client-node';
import { benchPlan } from './reconciler/plan';

const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

/** The status a baseline writes for `generation`. */
export function readyStatus(generation: number): Record<string, unknown> {
  return {
    observedGeneration: generation,
    phase: 'Ready',
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        reason: 'Reconciled',
        message: `generation ${generation} reconciled`,
        observedGeneration: generation,
        lastTransitionTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
      },
    ],
  };
}

/** Patches a `BenchObject`'s status to Ready at `generation` (one request). */
export async function patchReadyStatus(
  custom: k8s.CustomObjectsApi,
  namespace: string,
  name: string,
  generation: number,
): Promise<void> {
  await custom.patchNamespacedCustomObjectStatus(
    {
      group: benchPlan.group,
      version: benchPlan.version,
      plural: benchPlan.plural,
      namespace,
      name,
      body: { status: readyStatus(generation) },
    },
    mergePatch,
  );
}
