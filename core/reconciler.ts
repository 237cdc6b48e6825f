/**
 * The shape of a reconciler as the runtime sees it: the object's identity, what a step receives and
 * returns, and a reconciler (plan + schema + step implementations). Authoring helpers that build these
 * live in `reconcilers/`; the runtime (activities, worker) needs only these types.
 */
import type { z } from 'zod';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ObjectRef, PreviousStepResult, StatusFields, StepOutputs } from './definitions';

export type { PreviousStepResult, StepOutputs };
import type { Duration, ReconcilerPlan } from './plan';
import type { PlannedChange } from './dry-run';
import type { ApprovalRule } from './approval';

export type { PlannedChange };

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

/**
 * Operations on owned children, done for the step by the activity layer. Its members are plain
 * functions (no `this`): destructure them freely (`children: { apply, read }`).
 */
export interface ChildClient {
  /**
   * Server-side applies a child with homeostat's field manager, adding an ownerReference to the
   * reconciled object (controller). Returns the object as stored.
   */
  readonly apply: <T extends KubernetesObject>(child: T) => Promise<T>;
  /** Deletes a child; a missing child is success. */
  readonly delete: (child: Pick<KubernetesObject, 'apiVersion' | 'kind' | 'metadata'>) => Promise<void>;
  /** Reads a child; `undefined` when it does not exist. */
  readonly read: <T extends KubernetesObject>(
    child: Pick<KubernetesObject, 'apiVersion' | 'kind' | 'metadata'>,
  ) => Promise<T | undefined>;
}

/**
 * What a step implementation receives. Its functions are plain properties (no `this`), so a step may
 * destructure them (`async step({ spec, read, heartbeat })`) and lint's `unbound-method` stays quiet.
 */
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
  readonly heartbeat: (details?: unknown) => void;
  /** Aborted when Temporal cancels the activity (or its heartbeat times out). */
  readonly signal: AbortSignal;
  readonly log: Logger;
  /**
   * The outputs of the steps this one depends on (directly or not), by step name, from this pass.
   * Steps that returned no `outputs` are absent.
   */
  readonly results: Readonly<Record<string, StepOutputs>>;
  /**
   * This step's latest success for this object, from an earlier pass: compare `previous.generation`
   * with `object.generation` to make an external call once per generation
   * (`if (previous?.generation === object.generation) return { outputs: previous.outputs }`).
   * Absent before the step's first success, after the object was re-created, and in workflow runs
   * recorded before homeostat 0.2 (workflow-code version 4).
   */
  readonly previous?: PreviousStepResult;
  /**
   * Reads an object (a referenced Secret, a ConfigMap): `undefined` when it does not exist. A namespaced
   * kind without `metadata.namespace` is read in the object's namespace. Reads are confined like
   * writes: a namespaced object's steps read in its own namespace only, and any other read (another
   * namespace, a cluster-scoped kind, any read of a cluster-scoped object's steps) must be declared in
   * the reconciler's `reads` ({@link ReadDeclaration}); an undeclared read fails the step terminally
   * (`TerminalStepError`) without a request to the API server. Declare the kind in the reconciler's
   * `references` too so that its changes re-reconcile this object.
   */
  readonly read: <T extends KubernetesObject>(
    object: Pick<KubernetesObject, 'apiVersion' | 'kind'> & { metadata: { name: string; namespace?: string } },
  ) => Promise<T | undefined>;
  /**
   * `true` in a dry run (`POST …/plan`, `homeostat diff`, `env.plan`): `children` then applies and
   * deletes with `dryRun: All` and records the differences instead of writing, `previous` is absent,
   * and a write the step makes any other way must not happen (throw `writesUnavailableInDryRun`).
   * Absent in a real pass.
   */
  readonly dryRun?: boolean;
}

/** What a step may return. */
export interface StepResult {
  /**
   * Run another pass after this long (a durable timer in the workflow): `'30s'`, `'5 minutes'`, or a
   * number of milliseconds.
   */
  readonly requeueAfter?: Duration;
  /**
   * Like {@link requeueAfter}, in milliseconds; read only when `requeueAfter` is not set.
   * @deprecated Use `requeueAfter` (a number is milliseconds); kept so existing steps still compile.
   */
  readonly requeueAfterMs?: number;
  /** Values for the steps that depend on this one ({@link StepContext.results}). */
  readonly outputs?: StepOutputs;
  /** A short human-readable result, shown in the workflow's state and details. */
  readonly message?: string;
  /**
   * What the step started is not finished yet: a rollout, `'2/3 replicas ready'`. The pass ends in
   * phase `Reconciling` (not `Ready`) with this message in the `Ready` and `Progressing` conditions.
   * The next pass comes from an event — declare the child kind with `statusChanges: true` in the
   * plan's `owns`, so its status changes re-reconcile — or from `requeueAfter`. Not a failure: no
   * retry, no backoff. At most 1,024 characters.
   */
  readonly progressing?: string;
  /**
   * Values for the object's own top-level `status` fields (`{ readyReplicas: 2 }`), written with
   * homeostat's status when they change. Declare each in the CRD options (`crd.status`) so the API
   * server keeps it and `kubectl` can show it; recorded in history, so never secret. At most 4 KiB.
   */
  readonly status?: StatusFields;
}

/** A step implementation. Steps must be idempotent: Temporal runs them at least once. */
export type StepFn<Spec> = (ctx: StepContext<Spec>) => Promise<StepResult | void>;

/**
 * A step's preview for dry runs: what the step would change, computed from reads only. It gets the
 * step's context in dry-run form (`ctx.dryRun` is `true`; `children` applies with `dryRun: All` and
 * records each child's diff, which the dry run reports beside what the preview returns). It must not
 * write anywhere: a client of its own to an external system may only read (a read-only session).
 * Return the changes as short strings (`'CREATE ROLE app'`) or {@link PlannedChange}s; nothing (or an
 * empty list) means the step would change nothing outside its children. Values for dependent steps
 * (`outputs`) may be returned beside the changes.
 */
export type StepPreviewFn<Spec> = (
  ctx: StepContext<Spec>,
) => Promise<
  | readonly (string | PlannedChange)[]
  | { readonly changes?: readonly (string | PlannedChange)[]; readonly outputs?: StepOutputs }
  | void
>;

/**
 * How a dry run treats a step:
 * - a {@link StepPreviewFn}: it runs instead of the step;
 * - `'children-only'`: the step itself runs, against dry-run children (`ctx.children` with
 *   `dryRun: All`): declare it only for a step whose every write goes through `ctx.children` (it opens
 *   no client of its own: homeostat cannot turn another client's writes into a dry run).
 * A step with neither is never run in a dry run: it is reported "would run; no preview".
 */
export type StepPreview<Spec> = StepPreviewFn<Spec> | 'children-only';

/** A printer column of a generated CRD (`kubectl get` shows it). */
export interface CrdColumn {
  /** The column header; `Phase`, `Ready` and `Age` are always there. */
  readonly name: string;
  readonly type: 'integer' | 'number' | 'string' | 'boolean' | 'date';
  /** Where the value is, relative to the object: `.spec.image`. */
  readonly jsonPath: string;
  /** `kubectl explain`'s text for the column. */
  readonly description?: string;
  /** `0` shows the column always; higher priorities only with `kubectl get -o wide`. @default 0 */
  readonly priority?: number;
}

/** Extras of a generated CustomResourceDefinition that are not part of the plan. */
export interface CrdOptions {
  /** `kubectl get <shortName>`: lowercase DNS labels. */
  readonly shortNames?: readonly string[];
  /** `kubectl get <category>`. @default ['homeostat'] */
  readonly categories?: readonly string[];
  /** Extra printer columns, shown between Phase/Ready and Age. */
  readonly columns?: readonly CrdColumn[];
  /**
   * The reconciler's own top-level `status` fields, beside homeostat's `observedGeneration`, `phase`
   * and `conditions` (which cannot be redeclared): `{ readyReplicas: { type: 'integer' } }`. Steps
   * report their values with `StepResult.status`; a printer column can show them
   * (`.status.readyReplicas`).
   */
  readonly status?: Readonly<Record<string, StatusFieldSchema>>;
}

/** The schema of one of a reconciler's own status fields ({@link CrdOptions.status}). */
export interface StatusFieldSchema {
  readonly type: 'integer' | 'number' | 'string' | 'boolean';
  /** `kubectl explain`'s text. */
  readonly description?: string;
}

/** The name of a referenced object, as a reconciled object names it. */
export interface ReferencedName {
  readonly name: string;
  /** Unset: the referring object's own namespace (cluster-scoped kinds ignore it). */
  readonly namespace?: string;
}

/**
 * Objects a reconciler reads but does not own (controller-runtime's `Watches` with a map function):
 * when one of them changes, every object whose `referencedBy` names it is reconciled again.
 */
export interface ReferenceWatch {
  readonly apiVersion: string;
  readonly kind: string;
  /**
   * The objects of this kind that a reconciled object refers to, from its stored form (spec not yet
   * validated: return `[]` for what you cannot read). Runs in the informer bridge over its cache.
   */
  readonly referencedBy: (object: {
    readonly metadata: {
      readonly name?: string;
      readonly namespace?: string;
      readonly labels?: Record<string, string>;
    };
    readonly spec?: unknown;
  }) => readonly ReferencedName[];
}

/**
 * A read beyond the reconciled object's own namespace that a reconciler's steps may make through
 * `StepContext.read` (`defineReconciler({ reads: [...] })`). Without one, a namespaced object's steps
 * read objects in its own namespace only, and a cluster-scoped object's steps read nothing: a name a
 * tenant writes in a spec cannot reach into another namespace.
 *
 * @example
 * ```ts
 * reads: [
 *   { apiVersion: 'v1', kind: 'Namespace', scope: 'cluster' },            // a cluster-scoped kind
 *   { apiVersion: 'v1', kind: 'Secret', scope: { namespace: 'homeostat-system' } }, // one namespace
 *   { apiVersion: 'v1', kind: 'ConfigMap', scope: 'anyNamespace' },        // every namespace (never Secrets)
 * ]
 * ```
 */
export interface ReadDeclaration {
  /** The kind's `apiVersion` as in a manifest (`v1`, `homeostat.dev/v1alpha1`); only its group is compared. */
  readonly apiVersion: string;
  readonly kind: string;
  /**
   * Where objects of this kind may be read, beyond the object's own namespace:
   * - `'cluster'`: the kind is cluster-scoped (a `Namespace`, a `PostgresServer`);
   * - `{ namespace }`: in that one namespace (homeostat's own, where an administrator keeps a Secret);
   * - `'anyNamespace'`: in every namespace. Refused for `Secret`s: a Secret outside the object's
   *   namespace is read only from a namespace the reconciler names, never through a name a tenant controls.
   */
  readonly scope: 'cluster' | 'anyNamespace' | { readonly namespace: string };
}

/** A complete reconciler: its plan, schema and step implementations, and how its kind is watched. */
export interface Reconciler<Spec = unknown> {
  readonly plan: ReconcilerPlan;
  readonly schema: z.ZodType<Spec>;
  readonly steps: Readonly<Record<string, StepFn<Spec>>>;
  /**
   * How dry runs treat each step ({@link StepPreview}), by step name. A step absent here is reported
   * "would run; no preview" and never run in a dry run. @default {}
   */
  readonly previews?: Readonly<Record<string, StepPreview<Spec>>>;
  /**
   * The approval rules of the steps that need one ({@link ApprovalRule}), by step name; their plan
   * steps carry `approval`. @default {}
   */
  readonly approvals?: Readonly<Record<string, ApprovalRule<Spec>>>;
  /**
   * The CRD generated for the kind; `false` when the kind is not homeostat's to define (a core kind
   * such as `Namespace`, or a CRD installed by someone else). @default {}
   */
  readonly crd?: CrdOptions | false;
  /**
   * Only objects matching this label selector are reconciled (e.g. `homeostat.dev/tenant` on
   * `Namespace`s); the informer bridge watches with it. @default every object of the kind
   */
  readonly labelSelector?: string;
  /** Objects read but not owned whose changes re-reconcile the objects that refer to them. */
  readonly references?: readonly ReferenceWatch[];
  /**
   * The reads beyond the object's own namespace its steps may make ({@link ReadDeclaration}).
   * @default none: a namespaced object's steps read in its namespace only, a cluster-scoped one's nothing
   */
  readonly reads?: readonly ReadDeclaration[];
}
