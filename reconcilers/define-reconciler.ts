/**
 * The reconciler definition API: a reconciler joins its plan (plain data, see `plan.ts`) with its zod
 * spec schema and its step implementations, which run as activities. Workflow code never imports
 * this file; it imports only the plan.
 */
import { z } from 'zod';
import type { Logger } from 'pino';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ObjectRef } from '../workflows/definitions';
import type { ReconcilerPlan, StepPlan } from './plan';

/** The identity of the reconciled object, as a step sees it. */
export interface ObjectIdentity {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
  readonly uid: string;
  readonly generation: number;
  readonly labels: Readonly<Record<string, string>>;
}

/** Operations on owned children, done for the step by the activity layer. */
export interface ChildClient {
  /**
   * Server-side applies a child with homeostat's field manager, adding an ownerReference to the
   * reconciled object (controller). Returns the object as stored.
   */
  apply<T extends KubernetesObject>(child: T): Promise<T>;
  /** Deletes a child; a missing child is success. */
  delete(child: Pick<KubernetesObject, 'apiVersion' | 'kind' | 'metadata'>): Promise<void>;
  /** Reads a child; `undefined` when it does not exist. */
  read<T extends KubernetesObject>(
    child: Pick<KubernetesObject, 'apiVersion' | 'kind' | 'metadata'>,
  ): Promise<T | undefined>;
}

/** What a step implementation receives. */
export interface StepContext<Spec> {
  readonly ref: ObjectRef;
  readonly object: ObjectIdentity;
  /** The spec, parsed by the reconciler's schema. */
  readonly spec: Spec;
  readonly step: string;
  /** Temporal's attempt number of this activity (1-based, per retry round). */
  readonly attempt: number;
  readonly children: ChildClient;
  /** Records a heartbeat; long steps must call it more often than their `heartbeatTimeout`. */
  heartbeat(details?: unknown): void;
  /** Aborted when Temporal cancels the activity (or its heartbeat times out). */
  readonly signal: AbortSignal;
  readonly log: Logger;
}

/** What a step may return. */
export interface StepResult {
  /** Run another pass after this long (a durable timer in the workflow). */
  readonly requeueAfterMs?: number;
  /** A short human-readable result, shown in the workflow's state and details. */
  readonly message?: string;
}

/** A step implementation. Steps must be idempotent: Temporal runs them at least once. */
export type StepFn<Spec> = (ctx: StepContext<Spec>) => Promise<StepResult | void>;

type StepNames<L> = L extends readonly StepPlan<infer N>[] ? N : never;

/** A complete reconciler: its plan, schema and step implementations. */
export interface Reconciler<Spec = unknown> {
  readonly plan: ReconcilerPlan;
  readonly schema: z.ZodType<Spec>;
  readonly steps: Readonly<Record<string, StepFn<Spec>>>;
}

/** The argument of {@link defineReconciler}. */
export interface ReconcilerDefinition<P extends ReconcilerPlan, S extends z.ZodType> {
  /** The plan (from a plain module the workflow bundle imports too). */
  readonly plan: P;
  /** The spec schema; also the CRD's `spec` schema ({@link crdFor}). */
  readonly schema: S;
  /** An implementation for every step of the plan. */
  readonly steps: { readonly [K in StepNames<P['steps']>]: StepFn<z.output<S>> };
  /** An implementation for every cleanup step of the plan. */
  readonly cleanup?: { readonly [K in StepNames<NonNullable<P['cleanup']>>]: StepFn<z.output<S>> };
}

/**
 * Defines a reconciler. The step names of the plan and of the implementations must match: the type
 * checker requires every planned step, and this function rejects implementations that are not planned.
 *
 * @example
 * ```ts
 * // widget/plan.ts — plain data, also listed in the worker's workflow entry (planRegistry([...]))
 * export const widgetPlan = definePlan({
 *   group: 'homeostat.dev', version: 'v1alpha1', kind: 'Widget', plural: 'widgets', scope: 'Namespaced',
 *   steps: [
 *     { name: 'config', summary: 'apply the ConfigMap' },
 *     { name: 'deploy', dependsOn: ['config'], heartbeatTimeout: '10 seconds' },
 *     { name: 'dns' }, // no dependency: runs in parallel with `config`
 *   ],
 *   cleanup: [{ name: 'release-dns' }],
 *   driftCheckInterval: '10 minutes',
 * });
 * // widget/index.ts — the schema and the activities
 * export const widget = defineReconciler({
 *   plan: widgetPlan,
 *   schema: z.object({ replicas: z.number().int().min(0) }),
 *   steps: {
 *     config: async ({ children, object, spec }) => {
 *       await children.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: object.name },
 *         data: { replicas: String(spec.replicas) } });
 *     },
 *     deploy: async ({ heartbeat }) => { heartbeat(); return { requeueAfterMs: 30_000 }; },
 *     dns: async () => ({ message: 'record up to date' }),
 *   },
 *   cleanup: { 'release-dns': async () => {} },
 * });
 * ```
 */
export function defineReconciler<const P extends ReconcilerPlan, S extends z.ZodType>(
  def: ReconcilerDefinition<P, S>,
): Reconciler<z.output<S>> {
  const planned = new Set([...def.plan.steps, ...(def.plan.cleanup ?? [])].map((s) => s.name));
  const impls: Record<string, StepFn<z.output<S>>> = {
    ...(def.steps as Record<string, StepFn<z.output<S>>>),
    ...((def.cleanup ?? {}) as Record<string, StepFn<z.output<S>>>),
  };
  for (const name of Object.keys(impls)) {
    if (!planned.has(name)) throw new Error(`${def.plan.kind}: step ${name} is implemented but not planned`);
  }
  for (const name of planned) {
    if (!impls[name]) throw new Error(`${def.plan.kind}: step ${name} is planned but not implemented`);
  }
  return { plan: def.plan, schema: def.schema as z.ZodType<z.output<S>>, steps: impls };
}

type JsonSchema = Record<string, unknown>;

function structural(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(structural);
  if (typeof node !== 'object' || node === null) return node;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node as JsonSchema)) {
    // Kubernetes structural schemas forbid these.
    if (key === '$schema' || key === 'additionalProperties' || key === '$id') continue;
    out[key] = structural(value);
  }
  return out;
}

/**
 * The CustomResourceDefinition of a reconciler's resource, with the zod schema as the `spec` schema
 * and a status subresource. The result uses the API's JSON field names (for YAML and kubectl); pass
 * it through `k8s.loadYaml(JSON.stringify(crd))` before handing it to the typed client, whose
 * serializer drops names such as `x-kubernetes-preserve-unknown-fields` otherwise.
 */
export function crdFor(reconciler: Pick<Reconciler, 'plan' | 'schema'>): {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: Record<string, unknown>;
} {
  const { plan } = reconciler;
  const spec = structural(z.toJSONSchema(reconciler.schema, { target: 'openapi-3.0', io: 'input' }));
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plan.plural}.${plan.group}` },
    spec: {
      group: plan.group,
      scope: plan.scope,
      names: { plural: plan.plural, singular: plan.kind.toLowerCase(), kind: plan.kind },
      versions: [
        {
          name: plan.version,
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec,
                status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              },
            },
          },
        },
      ],
    },
  };
}
