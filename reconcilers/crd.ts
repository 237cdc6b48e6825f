/**
 * CustomResourceDefinitions generated from the reconcilers' zod spec schemas: a structural
 * `openAPIV3Schema` with the defaults, enums, bounds, formats and patterns the schema states, the CEL
 * rules attached with `celRule` as `x-kubernetes-validations` at their node (so kube-apiserver refuses
 * a bad spec at admission), the status subresource with homeostat's status shape, printer columns,
 * short names, categories and the plan's scope. `npm run crds` writes them to `deploy/crds/`.
 *
 * What kube-apiserver cannot state (a pattern RE2 cannot read, a union of unlike types, a `refine`
 * without CEL) is left out or loosened, never made stricter: the worker's zod validation still
 * enforces it and reports phase `Invalid`.
 */
import type { z } from 'zod';
import type { Operator } from '../core/operator';
import type { ReconcilerPlan } from '../core/plan';
import type { CrdColumn, CrdOptions } from '../core/reconciler';
import { CrdError } from './crd-error';
import { crdProblems } from './crd-problems';
import { specSchema } from './spec-schema';
import { statusSchemaWith } from './status-schema';

type Json = Record<string, unknown>;

/**
 * The CRD of a reconciler's resource, as the API's JSON (ready for YAML, kubectl or the generic
 * client). Throws a `CrdError` listing every problem of its names, scope and columns.
 */
export function customResourceDefinition(
  plan: Pick<ReconcilerPlan, 'group' | 'version' | 'kind' | 'plural' | 'scope'>,
  schema: z.ZodType,
  options: CrdOptions = {},
): Json {
  const problems = crdProblems(plan, options);
  if (problems.length) throw new CrdError(`${String(plan.kind)}: ${problems.join('; ')}`);
  let spec: Json;
  try {
    spec = specSchema(schema);
  } catch (err) {
    throw new CrdError(`${plan.kind}: ${(err as Error).message}`, { cause: err });
  }
  const columns: CrdColumn[] = [
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    ...(options.columns ?? []),
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ];
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
          additionalPrinterColumns: columns.map((c) => ({ ...c })),
          schema: {
            openAPIV3Schema: {
              type: 'object',
              required: ['spec'],
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec,
                status: statusSchemaWith(options.status),
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
    // A core kind (Namespace, ConfigMap) is Kubernetes' own: there is no CRD to generate.
    if (r.crd === false || r.plan.group === '') continue;
    out[`${r.plan.plural}.${r.plan.group}.yaml`] = customResourceDefinition(r.plan, r.schema, r.crd ?? {});
  }
  return out;
}
