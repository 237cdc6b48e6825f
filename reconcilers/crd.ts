/**
 * CustomResourceDefinitions generated from the reconcilers' zod spec schemas: a structural
 * `openAPIV3Schema` with the defaults, enums, bounds and patterns the schema states (zod `refine`
 * rules cannot be expressed there; homeostat checks them and reports phase `Invalid`), the status
 * subresource with homeostat's status shape, printer columns and short names. `npm run crds` writes
 * them to `deploy/crds/`.
 */
import { z } from 'zod';
import type { Operator } from '../core/operator';
import type { ReconcilerPlan } from '../core/plan';
import type { CrdOptions } from '../core/reconciler';

type Json = Record<string, unknown>;

/**
 * Rewrites a JSON Schema into a Kubernetes structural schema: drops keys Kubernetes forbids, keeps
 * `additionalProperties` only where it types a map.
 */
export function structuralSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(structuralSchema);
  if (typeof node !== 'object' || node === null) return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node as Json)) {
    if (key === '$schema' || key === '$id' || key === 'propertyNames' || key === 'id') continue;
    if (key === 'additionalProperties' && typeof value !== 'object') continue;
    out[key] = structuralSchema(value);
  }
  return out;
}

/** The status schema homeostat writes (observedGeneration, phase, metav1.Condition list). */
export const statusSchema: Json = {
  type: 'object',
  properties: {
    observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
    phase: { type: 'string', enum: ['Pending', 'Reconciling', 'Ready', 'Degraded', 'Invalid', 'Deleting'] },
    conditions: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
      items: {
        type: 'object',
        required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
        properties: {
          type: {
            type: 'string',
            maxLength: 316,
            pattern:
              '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
          },
          status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
          observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
          lastTransitionTime: { type: 'string', format: 'date-time' },
          reason: {
            type: 'string',
            maxLength: 1024,
            minLength: 1,
            pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
          },
          message: { type: 'string', maxLength: 32768 },
        },
      },
    },
  },
  // Reconcilers may report more (e.g. per-child results); keep it rather than prune it.
  'x-kubernetes-preserve-unknown-fields': true,
};

/** The CRD of a reconciler's resource, as the API's JSON (ready for YAML, kubectl or the generic client). */
export function customResourceDefinition(
  plan: Pick<ReconcilerPlan, 'group' | 'version' | 'kind' | 'plural' | 'scope'>,
  schema: z.ZodType,
  options: CrdOptions = {},
): Json {
  const spec = structuralSchema(z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input' }));
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${plan.plural}.${plan.group}`,
      labels: { 'app.kubernetes.io/part-of': 'homeostat' },
    },
    spec: {
      group: plan.group,
      scope: plan.scope,
      names: {
        plural: plan.plural,
        singular: plan.kind.toLowerCase(),
        kind: plan.kind,
        listKind: `${plan.kind}List`,
        ...(options.shortNames?.length ? { shortNames: [...options.shortNames] } : {}),
        categories: [...(options.categories ?? ['homeostat'])],
      },
      versions: [
        {
          name: plan.version,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
            { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
            ...(options.columns ?? []),
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              required: ['spec'],
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec,
                status: statusSchema,
              },
            },
          },
        },
      ],
    },
  };
}

/**
 * The CRDs of an operator's reconcilers, by file name (`<plural>.<group>.yaml`); reconcilers with
 * `crd: false` (core kinds, CRDs defined elsewhere) have none.
 */
export function operatorCrds(operator: Operator): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const r of operator.reconcilers) {
    if (r.crd === false) continue;
    out[`${r.plan.plural}.${r.plan.group}.yaml`] = customResourceDefinition(r.plan, r.schema, r.crd ?? {});
  }
  return out;
}
