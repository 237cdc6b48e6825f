/**
 * Dry runs ("plans"): what a reconcile pass of an object would do, step by step, computed without side
 * effects. One result type ({@link DryRunResult}) answers the API (`POST …/plan`), the CLI
 * (`homeostat diff`) and the test environment (`env.plan`), so the three give the same answer.
 *
 * Where it runs: a short workflow of its own (`planObjectWorkflow`) on the object's task queue, so the
 * operator's code on a worker computes it; its ID is the object's workflow ID plus `/plan/<unique>`,
 * and it never signals, queries or otherwise touches the object's own workflow, whose passes go on as
 * if no dry run happened. The workflow runs one activity (`planObject`), which reads the object (or
 * validates the manifest given), then runs each step's preview in dependency order.
 */
import type { ObjectRef } from './definitions';

/** The workflow type of a dry run. */
export const planWorkflowType = 'planObjectWorkflow';

/** The activity type that computes a dry run. */
export const planActivityType = 'planObject';

/** The longest a dry run may take, end to end (its workflow's execution timeout). */
export const planTimeoutMs = 120_000;

/**
 * The ID of a dry run's workflow: the object's workflow ID, `/plan/`, and a suffix unique to this
 * dry run (so two dry runs of one object never collide, and none is the object's workflow).
 */
export function planWorkflowIdFor(objectWorkflowId: string, unique: string): string {
  return `${objectWorkflowId}/plan/${unique}`;
}

/** The input of a dry run. */
export interface PlanInput {
  readonly ref: ObjectRef;
  /**
   * A manifest to plan instead of the stored object (`kubectl diff -f`): it must name the same kind,
   * namespace and name as `ref`. It is validated as the API server would (a server-side dry-run create
   * or apply: the CRD's schema, defaults, admission) and then by the reconciler's spec schema.
   */
  readonly manifest?: Readonly<Record<string, unknown>>;
}

/** One field of a child that a dry run would change: its path, old and new value (absent: none). */
export interface FieldChange {
  /** `spec.template.spec.containers[0].image`; a key that is not an identifier is quoted: `labels["app.kubernetes.io/name"]`. */
  readonly path: string;
  /** The live value; absent when the field would be added. Secret data shows as `(redacted)`. */
  readonly old?: unknown;
  /** The value after the apply; absent when the field would be removed. Secret data shows as `(redacted)`. */
  readonly new?: unknown;
}

/**
 * What a server-side dry-run apply (or delete) of one child found:
 * - `create`: the child does not exist; `fields` are what it would be created with;
 * - `update`: it exists, is this object's, and these `fields` would change;
 * - `unchanged`: it exists, is this object's, and the apply would change nothing;
 * - `delete`: the step would delete it;
 * - `refused`: it exists and is not this object's (homeostat does not adopt): `reason` says whose.
 * Server-managed fields (`managedFields`, `resourceVersion`, `generation`, `uid`,
 * `creationTimestamp`) and `status` are never compared.
 */
export interface ChildDiff {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
  readonly action: 'create' | 'update' | 'unchanged' | 'delete' | 'refused';
  readonly fields: readonly FieldChange[];
  readonly reason?: string;
}

/** A change a step's preview says it would make to an external system. */
export interface PlannedChange {
  /** What kind of change: `create`, `alter`, `grant`, `revoke`, `drop`, `sql`… */
  readonly action: string;
  /** What it changes: `role app_owner`, `database app`. */
  readonly target: string;
  /** The statement or request it would send, or any detail (never a secret). */
  readonly detail?: string;
}

/**
 * How a step's dry run went:
 * - `previewed`: its preview ran (or the step itself, against dry-run children): `children` and
 *   `changes` are what it would do (both empty: nothing);
 * - `no-preview`: the step would run but has no preview, so what it would do is unknown (it was not run:
 *   its writes could not be intercepted);
 * - `failed`: its preview failed (`message`, `code`): the real pass would fail there too, or could not be
 *   previewed (a refusal, an invalid child);
 * - `skipped`: a step it depends on did not preview, so it was not previewed either.
 */
export type DryRunStepOutcome = 'previewed' | 'no-preview' | 'failed' | 'skipped';

/** One step of a dry run. */
export interface DryRunStep {
  readonly name: string;
  readonly outcome: DryRunStepOutcome;
  readonly children: readonly ChildDiff[];
  readonly changes: readonly PlannedChange[];
  /** Why it failed or was skipped. */
  readonly message?: string;
  /** The failure's type (`AdoptionRefused`, `InvalidSpec`, `StepFailed`…). */
  readonly code?: string;
}

/** What a pass of one object would do. The JSON shape is stable (`version`). */
export interface DryRunResult {
  /** The shape's version. */
  readonly version: 1;
  readonly ref: ObjectRef;
  /** What was planned: the stored object, or a manifest given with the request. */
  readonly source: 'stored' | 'manifest';
  /** Whether the object exists (a manifest of a new object plans its creation). */
  readonly exists: boolean;
  /** `reconcile` (the plan's steps) or `cleanup` (its cleanup steps: the object is being deleted). */
  readonly pass: 'reconcile' | 'cleanup';
  /** Each step, in dependency order. */
  readonly steps: readonly DryRunStep[];
  /**
   * Whether a pass could change something, or what it would do is unknown: a child created, updated,
   * deleted or refused, a change listed, or a step not previewed, skipped or failed. `false` only when
   * every step previewed and none would change anything (`homeostat diff` exits 0, else 1).
   */
  readonly changed: boolean;
}

/** Whether a dry run's steps would change something (or cannot tell): {@link DryRunResult.changed}. */
export function stepsWouldChange(steps: readonly DryRunStep[]): boolean {
  return steps.some(
    (s) => s.outcome !== 'previewed' || s.changes.length > 0 || s.children.some((c) => c.action !== 'unchanged'),
  );
}
