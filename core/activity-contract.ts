/**
 * The contract between the object workflow and its generic activities: inputs and results of observe,
 * status, finalizer and step activities. Plain types, shared by `workflows/` and `activities/`.
 */
import type { ConditionSpec, ObjectRef, ObjectStatus, Phase, PreviousStepResult, StatusFields } from './definitions';
import type { ReconcilerPlan } from './plan';
import type { ObjectIdentity, StepOutputs, StepResult } from './reconciler';

/** One `events.k8s.io/v1` Event about an object. */
export interface EventRecord {
  readonly type: 'Normal' | 'Warning';
  /** CamelCase, e.g. `Reconciled`, `InvalidSpec`. */
  readonly reason: string;
  /** CamelCase action, e.g. `Reconcile`, `Delete`. */
  readonly action: string;
  readonly note: string;
  /** Makes the Event's name deterministic, so a retried activity records it once. */
  readonly dedupKey: string;
}

/** The input of {@link Activities.observeObject}. */
export interface ObserveInput {
  readonly ref: ObjectRef;
  /**
   * The digest of the spec this run has already recorded (workflow-code version 5): when the object's
   * spec still has it, the observation omits the spec ({@link ObservedObject.specUnchanged}) and the
   * workflow uses the one it holds, so a pass records an unchanged spec by reference, not again.
   */
  readonly knownSpecDigest?: string;
  /**
   * Also ask the approval rules of the pass's gated steps (workflow-code version 5): the observation
   * names the steps whose rule asks for approval now ({@link ObservedObject.approvalsAsked}), and the
   * workflow runs the `checkApproval` activity only for those.
   */
  readonly approvalRules?: boolean;
  /**
   * Also run the plan's leading chain of local steps (`leadingLocalSteps`, within `budgetMs` of
   * their start-to-close timeouts) when the object is found, valid and not being deleted: each step's
   * first attempt, in order, each within its own timeout, stopping at the first that fails. Their
   * outcomes come back in {@link ObservedObject.leading}; the workflow takes them as the steps' first
   * attempts and runs the rest of the pass (retries included) as usual.
   */
  readonly leadingSteps?: {
    readonly budgetMs: number;
    /**
     * When every step of the plan ran and succeeded, also write the status the pass ends with
     * (`succeededPassStatus`) and, if the phase changes, its Event (keyed with this pass number), as
     * the status write would: the workflow then finds that status already there and writes nothing.
     */
    readonly status?: { readonly pass: number };
    /**
     * Each step's latest success in an earlier pass (`StepContext.previous`), by step name, for the
     * object with this UID: a re-created object (another UID) gets none.
     */
    readonly previous?: { readonly uid: string; readonly steps: Readonly<Record<string, PreviousStepResult>> };
  };
}

/** A step failure as data: what the workflow reads of an activity failure. */
export interface StepFailureData {
  readonly message: string;
  readonly type?: string;
  readonly nonRetryable: boolean;
  readonly details?: readonly unknown[];
}

/** How one of the leading steps observe ran ended: its result, or its failure. */
export type LeadingStepOutcome =
  | { readonly step: string; readonly result: StepActivityResult }
  | { readonly step: string; readonly failure: StepFailureData };

/** A snapshot of the object, as seen by {@link Activities.observeObject}. */
export interface ObjectSnapshot {
  readonly uid: string;
  readonly generation: number;
  readonly resourceVersion: string;
  /** `metadata.deletionTimestamp` is set. */
  readonly deleting: boolean;
  readonly hasFinalizer: boolean;
  /** The status fields homeostat owns, without transition times. */
  readonly status: ObjectStatus;
  readonly identity: ObjectIdentity;
  /** The object's own drift-check interval (its annotation, clamped to the plan's bounds), if it set one. */
  readonly driftCheckIntervalMs?: number;
}

/** An object {@link Activities.observeObject} found. */
export interface ObservedObject extends ObjectSnapshot {
  readonly found: true;
  /**
   * The parsed spec (or, for an object being deleted whose spec no longer parses, the raw spec).
   * Absent when {@link specUnchanged}.
   */
  readonly spec?: unknown;
  /** The digest of {@link spec} (SHA-256 of its JSON), by which a later pass or a step names it. */
  readonly specDigest?: string;
  /** The spec is the one of {@link ObserveInput.knownSpecDigest}: omitted, the workflow has it. */
  readonly specUnchanged?: boolean;
  /**
   * The reconciler's plan as the worker that observed knows it. Recorded in history with the
   * observation, so the workflow needs no copy of any plan and replays with the plan it ran.
   */
  readonly plan: ReconcilerPlan;
  /** The leading local steps run with the observation ({@link ObserveInput.leadingSteps}), in order. */
  readonly leading?: readonly LeadingStepOutcome[];
  /** Observe wrote the pass's status after running every step (the snapshot shows it as written). */
  readonly statusWritten?: boolean;
  /**
   * The gated steps of the pass whose approval rule asks for approval now ({@link ObserveInput.approvalRules}):
   * the others run without the `checkApproval` activity. Absent (not asked, or an older worker): every
   * gated step is checked.
   */
  readonly approvalsAsked?: readonly string[];
}

/** The result of {@link Activities.observeObject}. */
export type Observation = { readonly found: false } | ObservedObject;

/** The details of an `InvalidSpec` failure thrown by {@link Activities.observeObject}. */
export interface InvalidSpecDetails {
  readonly code: 'ERR_INVALID_SPEC';
  readonly data: ObjectSnapshot;
}

/** The input of {@link Activities.writeStatus}. */
export interface WriteStatusInput {
  readonly ref: ObjectRef;
  /** The object's UID: a different object with the same name is left alone. */
  readonly uid: string;
  readonly status: {
    readonly observedGeneration: number;
    readonly phase: Phase;
    readonly conditions: readonly ConditionSpec[];
    /** The reconciler's own status fields to set (the ones not given are left as they are). */
    readonly fields?: StatusFields;
  };
  /** An Event to record once the status is written (for pass outcomes that change the phase). */
  readonly event?: EventRecord;
  /**
   * The resourceVersion at which the object was observed with no status at all (a new object). The
   * write then needs no read first: it is made against this version, and a 409 or 404 falls back to
   * read, merge and write. Absent: the status is read first.
   */
  readonly expectedVersion?: string;
  /**
   * Steps an earlier plan had and this one has not (`retiredSteps`): the workflow ran them, so their
   * `<Step>Ready` conditions are homeostat's and the write removes them. Absent: none.
   */
  readonly retiredSteps?: readonly string[];
}

/** The result of {@link Activities.writeStatus}. */
export interface WriteStatusResult {
  readonly written: boolean;
  /** Why nothing was written. */
  readonly reason?: 'unchanged' | 'gone';
}

/** The input of a step activity. */
export interface StepInput {
  readonly ref: ObjectRef;
  readonly identity: ObjectIdentity;
  /** The spec the pass observed; absent when {@link specDigest} names it instead. */
  readonly spec?: unknown;
  /**
   * The digest of the spec the pass observed, given instead of the spec to a regular step (workflow-code
   * version 5), whose input is recorded in history: the step re-reads the object and runs on its spec
   * only if it still has this digest, else fails with `SpecChanged` and the pass is superseded.
   */
  readonly specDigest?: string;
  /** Outputs of the steps this one depends on, from this pass. */
  readonly results?: Readonly<Record<string, StepOutputs>>;
  /** The step's latest success in an earlier pass (`StepContext.previous`). */
  readonly previous?: PreviousStepResult;
}

/** What a step activity returns: the step's result and the attempt that produced it. */
export interface StepActivityResult extends StepResult {
  readonly attempt: number;
}

/** The generic activities (step activities are added under `<plural>.<group>/<step>`). */
export interface Activities {
  /**
   * Reads the object; validates its spec (`InvalidSpec` when it does not parse); adds the finalizer
   * when the plan has cleanup steps (removes homeostat's when it has none);
   * runs the leading local steps when asked ({@link ObserveInput.leadingSteps}).
   */
  observeObject(input: ObserveInput): Promise<Observation>;
  /** Writes status (status subresource, resourceVersion precondition, retried on 409) if it changed. */
  writeStatus(input: WriteStatusInput): Promise<WriteStatusResult>;
  /** Removes homeostat's finalizer; a missing object is success. */
  removeFinalizer(input: {
    readonly ref: ObjectRef;
    readonly uid: string;
    readonly event?: EventRecord;
  }): Promise<void>;
}
