/**
 * The wire contract of homeostat's per-object workflow: its ID scheme, start input, signals, queries
 * and updates. Clients (the informer bridge, the HTTP API, tests) import this file without importing
 * workflow code; wire names are kebab-case and are API surface (docs/architecture.md).
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { ApprovalDecision, AwaitingApproval } from './approval';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { type FairnessSetting, objectPriority } from './fairness';
import { workflowCodeVersion } from './workflow-code-version';

/** A Kubernetes object, named by its API group/version/kind and namespace/name. */
export interface ObjectRef {
  /** API group; `''` for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** Undefined or `''` for a cluster-scoped object. */
  readonly namespace?: string;
  readonly name: string;
}

/**
 * Why a reconcile was requested. `child-changed`: an owned child changed (its ownerReference names
 * the object). `referenced-changed`: an object the reconciler reads but does not own (a Secret named
 * in the spec, declared in the reconciler's `references`) was added, changed or deleted.
 */
export type ReconcileReason =
  'added' | 'updated' | 'deleted' | 'child-changed' | 'referenced-changed' | 'resync' | 'api' | 'drift' | 'requeue';

/**
 * A level-based reconcile request: it names the object and the state seen, never the body
 * (activities re-read the object).
 */
export interface ReconcileRequest {
  readonly ref: ObjectRef;
  /** The object's UID: the same name with a new UID is a new object. */
  readonly uid: string;
  /** `metadata.generation` seen by the sender (0 when unknown, e.g. deleted objects). */
  readonly generation: number;
  readonly resourceVersion: string;
  readonly reason: ReconcileReason;
}

/** The workflow type name of the per-object workflow. */
export const objectWorkflowType = 'objectWorkflow';

/** The default task queue of homeostat's workers. */
export const defaultTaskQueue = 'homeostat';

/**
 * The ID of an object's workflow: `homeostat/<group>/<kind>/<namespace>/<name>`, with `core` for the
 * core group and `_` for cluster-scoped objects.
 */
export function workflowIdFor(ref: Pick<ObjectRef, 'group' | 'kind' | 'namespace' | 'name'>): string {
  return `homeostat/${ref.group || 'core'}/${ref.kind}/${ref.namespace || '_'}/${ref.name}`;
}

/** Signal: reconcile this object (coalesced by the workflow). */
export const reconcileRequestedSignal = defineSignal<[ReconcileRequest]>('reconcile-requested');

/** Typed search attributes (Temporal UI and visibility), registered by devstack and deploy. */
export const searchAttributeKeys = {
  kind: defineSearchAttributeKey('HomeostatKind', SearchAttributeType.KEYWORD),
  namespace: defineSearchAttributeKey('HomeostatNamespace', SearchAttributeType.KEYWORD),
  name: defineSearchAttributeKey('HomeostatName', SearchAttributeType.KEYWORD),
  phase: defineSearchAttributeKey('HomeostatPhase', SearchAttributeType.KEYWORD),
  generation: defineSearchAttributeKey('HomeostatGeneration', SearchAttributeType.INT),
} as const;

/**
 * The reconcile metrics the object workflow emits through the workflow `metricMeter`, exported by the
 * worker's `/metrics` (controller-runtime's names with homeostat's prefix). Labels: `group` (`core`
 * for the core group), `kind`, and on the total `result` (a {@link PassResult}); errors count the
 * `degraded` and `invalid` passes; the time is a pass's duration in seconds (workflow time: from the
 * workflow task that started it to the one that finished it).
 */
export const reconcileMetricNames = {
  total: 'homeostat_reconcile_total',
  errors: 'homeostat_reconcile_errors_total',
  time: 'homeostat_reconcile_time_seconds',
} as const;

/**
 * controller-runtime's reconcile metric names (sigs.k8s.io/controller-runtime
 * `pkg/internal/controller/metrics`), exported beside {@link reconcileMetricNames} with its labels:
 * `controller` (the lowercased kind, controller-runtime's default controller name) and, on `total`,
 * `result` (`success`, `error`, `requeue`, `requeue_after`).
 */
export const controllerRuntimeMetricNames = {
  total: 'controller_runtime_reconcile_total',
  errors: 'controller_runtime_reconcile_errors_total',
  terminalErrors: 'controller_runtime_terminal_reconcile_errors_total',
  time: 'controller_runtime_reconcile_time_seconds',
} as const;

/** The lifecycle phases an object's `status.phase` reports, in the order of the CRD's enum. */
export const phases = [
  'Pending',
  'Reconciling',
  'Ready',
  'Degraded',
  'Invalid',
  'Deleting',
  'AwaitingApproval',
] as const;

/**
 * The lifecycle phase an object's `status.phase` reports: `Pending`, `Reconciling`, `Ready`, `Degraded`,
 * `Invalid`, `Deleting` or `AwaitingApproval` (a step waits for a person's approval: `core/approval.ts`).
 */
export type Phase = (typeof phases)[number];

/** A status condition in the Kubernetes `metav1.Condition` shape, without its `lastTransitionTime`
 * (the activity that writes status sets it, so workflow code stays deterministic). */
export interface ConditionSpec {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  /** CamelCase machine-readable reason. */
  readonly reason: string;
  readonly message: string;
  readonly observedGeneration?: number;
}

/**
 * Top-level `status` fields a reconciler reports beside homeostat's own (`readyReplicas`): declared in
 * its CRD options (`crd.status`), returned by its steps (`StepResult.status`). Plain values only.
 */
export type StatusFields = Readonly<Record<string, string | number | boolean>>;

/** The part of `status` homeostat owns. */
export interface ObjectStatus {
  readonly observedGeneration?: number;
  readonly phase?: Phase;
  readonly conditions?: readonly ConditionSpec[];
  /** The reconciler's own status fields ({@link StatusFields}); on kinds homeostat defines only. */
  readonly fields?: StatusFields;
}

/**
 * The start input of {@link objectWorkflowType}. `{ ref }` is a complete input: the informer bridge
 * starts the workflow with `signalWithStart(objectWorkflow, { args: [{ ref }], signal:
 * reconcileRequestedSignal, signalArgs: [request] })`, or, for a new object, with a plain start whose
 * input carries the request as `pending` (one action instead of two). `carried` is written by the
 * workflow itself when it continues as new.
 */
export interface ObjectWorkflowInput {
  readonly ref: ObjectRef;
  /** The request to serve first: the newest one pending when the previous run continued as new, or a new object's. */
  readonly pending?: ReconcileRequest;
  /** Counters and memory carried across continue-as-new; absent on a fresh start. */
  readonly carried?: CarriedState;
  /**
   * The workflow-code version whose behaviour this run follows (`core/workflow-code-version`). Every
   * starter writes the current one ({@link objectWorkflowStartOptions}), and so does continue-as-new;
   * runs recorded before the number existed carry the three booleans below instead.
   */
  readonly codeVersion?: number;
  /** @deprecated Recorded by runs before {@link codeVersion} (version 1 and up); read for replay only. */
  readonly localActivities?: boolean;
  /** @deprecated Recorded by runs before {@link codeVersion} (version 2 and up); read for replay only. */
  readonly fuseLeadingSteps?: boolean;
  /** @deprecated Recorded by runs before {@link codeVersion} (version 3); read for replay only. */
  readonly driftTimerWindow?: boolean;
}

/**
 * A step's latest success for this object, as its workflow remembers it: across passes, worker
 * restarts and continue-as-new, forgotten when the object is re-created (a new UID).
 */
export interface PreviousStepResult {
  /** The object's `metadata.generation` the pass that ran it reconciled. */
  readonly generation: number;
  /** The outputs it returned, if any. */
  readonly outputs?: StepOutputs;
  /** The message it returned, if any. */
  readonly message?: string;
}

/**
 * Small, non-secret values a step hands to the steps that depend on it (an ID it created, a resolved
 * address). They are recorded in the workflow history: never put credentials here. At most 4 KiB
 * (JSON) per step.
 */
export type StepOutputs = Readonly<Record<string, string | number | boolean | null>>;

/**
 * What one run hands to the next on continue-as-new: small and bounded. A versioned envelope read by
 * `readCarriedState` (core/carried-state.ts): fields are only added, and optional.
 */
export interface CarriedState {
  /** The envelope format (`carriedStateFormat`); absent in envelopes written before it existed (format 1). */
  readonly format?: number;
  /** The UID of the object this workflow reconciles, once known. */
  readonly uid?: string;
  /** Passes completed by all earlier runs. */
  readonly passes: number;
  /** How many runs came before this one. */
  readonly runs: number;
  /** The generation found invalid, so that requests for it do not retry (until the spec changes). */
  readonly invalidGeneration?: number;
  /** Why {@link invalidGeneration} is blocked. @default 'invalid' */
  readonly blockedBy?: 'invalid' | 'terminal';
  /** The last pass outcome, so `state` stays meaningful after continue-as-new. */
  readonly lastOutcome?: PassOutcome;
  /** Each step's latest success (`StepContext.previous`), by step name; bounded by the plan's steps. */
  readonly previous?: Readonly<Record<string, PreviousStepResult>>;
  /** The requeue or drift timer that was armed, re-armed by the next run (epoch milliseconds). */
  readonly timer?: { readonly kind: 'requeue' | 'drift'; readonly at: number };
  /**
   * This run was started by continuing as new onto another worker deployment version, between passes:
   * it runs a pass at once (the new version's plan, serving what woke the previous run), and does not
   * move again before that pass (a guard against a continue-as-new loop).
   */
  readonly upgraded?: boolean;
  /**
   * The approvals this workflow holds or waits for (`core/approval.ts`; workflow-code version 5): the
   * steps approved, each for one generation and preview hash, and the wait a pass gave up to continue
   * as new (with its deadline, and a decision that came meanwhile). The next run's pass resumes that
   * wait when its check finds the same step, generation and preview; a grant still lets its step run.
   */
  readonly approvals?: {
    readonly granted?: Readonly<Record<string, { readonly generation: number; readonly previewHash: string }>>;
    readonly awaiting?: {
      readonly step: string;
      readonly generation: number;
      readonly previewHash: string;
      readonly reason: string;
      readonly preview: string;
      readonly deadline: string;
    };
    readonly decision?: {
      readonly ref: ObjectRef;
      readonly decision: 'approve' | 'reject';
      readonly approver: string;
      readonly comment?: string;
      readonly generation: number;
      readonly previewHash: string;
    };
  };
}

/** How a step ended in the latest pass. */
export type StepStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'retrying' | 'skipped';

/** One step's result in the latest pass. */
export interface StepState {
  readonly status: StepStatus;
  /** Activity attempts made for this step in the latest pass (all retry rounds). */
  readonly attempts: number;
  /** The message the step returned, or its error. */
  readonly message?: string;
  /** The requeue the step asked for, in milliseconds. */
  readonly requeueAfterMs?: number;
  /**
   * The step succeeded but what it started has not finished (a rollout: `2/3 replicas ready`): the
   * pass ends `Reconciling` with this message.
   */
  readonly progressing?: string;
  /**
   * The step did not run because a step it depends on (this one, directly or not) is still
   * progressing: it runs in a later pass, once that step reports its work finished.
   */
  readonly waitingFor?: string;
}

/**
 * The result of a reconcile pass. `reconciling`: every step succeeded, but one reported progress
 * still to come (the phase is `Reconciling` until an event — a child's status change — or a requeue
 * runs the pass that finds it done).
 */
export type PassResult = 'ready' | 'reconciling' | 'invalid' | 'degraded' | 'deleted' | 'gone' | 'superseded';

/** The outcome of one pass, returned by {@link reconcileNowUpdate} and kept in {@link ObjectState}. */
export interface PassOutcome {
  /** Pass number, counted over all runs of this workflow (1-based). */
  readonly pass: number;
  readonly result: PassResult;
  readonly phase: Phase;
  /** The generation the pass read (0 when the object was gone). */
  readonly generation: number;
  readonly uid?: string;
  readonly steps: Readonly<Record<string, StepState>>;
  /** The first error message of the pass, if any. */
  readonly error?: string;
  /** The requeue asked for by the steps, in milliseconds. */
  readonly requeueAfterMs?: number;
  /** Whether status was written in this pass. */
  readonly statusWritten: boolean;
}

/** The next durable timer of the workflow. */
export interface NextTimer {
  readonly kind: 'requeue' | 'drift' | 'retry';
  /** When it fires, as an ISO timestamp (workflow time). */
  readonly at: string;
}

/** The answer of the {@link stateQuery}. */
export interface ObjectState {
  readonly ref: ObjectRef;
  readonly uid?: string;
  readonly phase: Phase;
  readonly conditions: readonly ConditionSpec[];
  /** The generation the last finished pass reconciled. */
  readonly observedGeneration?: number;
  /** The highest generation requested so far. */
  readonly wantedGeneration?: number;
  /** Whether a pass is running. */
  readonly reconciling: boolean;
  /** Per-step results of the current or latest pass. */
  readonly steps: Readonly<Record<string, StepState>>;
  readonly lastError?: string;
  readonly lastOutcome?: PassOutcome;
  readonly nextTimer?: NextTimer;
  /** Passes completed over all runs. */
  readonly passes: number;
  /** Runs of this workflow so far, counting this one (continue-as-new starts a new run). */
  readonly run: number;
  /** Whether a request is waiting for the next pass. */
  readonly pending: boolean;
  /** The step waiting for approval, and what a decision must name (`POST …/approve`). */
  readonly awaitingApproval?: AwaitingApproval;
}

/** The argument of {@link reconcileNowUpdate}. */
export interface ReconcileNowRequest {
  readonly ref: ObjectRef;
  /** When given, it must be the UID the workflow reconciles. */
  readonly uid?: string;
}

/** Query: the object's reconcile state. */
export const stateQuery = defineQuery<ObjectState>('state');

/** Update: run a pass now and return its outcome. The validator rejects requests for another object. */
export const reconcileNowUpdate = defineUpdate<PassOutcome, [ReconcileNowRequest]>('reconcile-now');

/** What the `decide-approval` update answers: the decision taken on the step that waited. */
export interface ApprovalAnswer {
  readonly step: string;
  readonly generation: number;
  readonly decision: 'approve' | 'reject';
}

/**
 * Update: approve or reject the step the workflow waits for (`core/approval.ts`). The validator refuses
 * (failure types `NotAwaitingApproval`, `StaleApproval`) a decision when nothing waits, or one for another
 * generation or preview; an accepted decision (approver and comment) is recorded in the history.
 */
export const decideApprovalUpdate = defineUpdate<ApprovalAnswer, [ApprovalDecision]>('decide-approval');

/** The one-line static summary of an object's workflow in the Temporal UI. */
export function staticSummaryFor(ref: ObjectRef): string {
  const where = ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
  return `Reconciles ${ref.kind} ${where} (${ref.group || 'core'}/${ref.version})`;
}

/**
 * The options a client uses to start (or signal-with-start) an object's workflow: ID, task queue,
 * start input, static summary, the object's search attributes (set at start, so the workflow does
 * not spend an upsert on them) and its priority: the object's namespace as fairness key, weighted by
 * `fairnessWeights` (see `core/fairness.ts`; continue-as-new and activities inherit it), none when it is `false`.
 */
export function objectWorkflowStartOptions(
  ref: ObjectRef,
  taskQueue: string = defaultTaskQueue,
  fairnessWeights: FairnessSetting = {},
) {
  return {
    workflowId: workflowIdFor(ref),
    taskQueue,
    ...(fairnessWeights === false ? {} : { priority: objectPriority(ref, fairnessWeights) }),
    args: [{ ref, codeVersion: workflowCodeVersion }] as [ObjectWorkflowInput],
    staticSummary: staticSummaryFor(ref),
    typedSearchAttributes: [
      { key: searchAttributeKeys.kind, value: ref.kind },
      { key: searchAttributeKeys.namespace, value: ref.namespace || '_' },
      { key: searchAttributeKeys.name, value: ref.name },
    ],
  };
}
