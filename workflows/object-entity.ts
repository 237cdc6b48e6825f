/**
 * The state of one object's workflow run, as a class: what the `state` query answers, what the
 * Temporal UI's current details show, the outcome of each pass, the rule that skips a blocked
 * generation, the search attributes that changed and what continue-as-new carries. No Temporal calls
 * and no clock of its own (times are passed in), so it is unit-tested directly.
 */
import type { SearchAttributeUpdatePair, TypedSearchAttributes } from '@temporalio/common';
import type { ReconcilerPlan, StepPlan } from '../core/plan';
import {
  searchAttributeKeys,
  type CarriedState,
  type ConditionSpec,
  type ObjectRef,
  type ObjectState,
  type ObjectWorkflowInput,
  type PassOutcome,
  type PassResult,
  type Phase,
  type PreviousStepResult,
  type ReconcileRequest,
  type StepState,
} from '../core/definitions';
import { carriedStateFormat } from '../core/carried-state';
import type { ApprovalDecision, AwaitingApproval } from '../core/approval';
import { Coalescer, detailsMarkdown } from './object-state';

/** The kinds of durable timer a run arms: a step's requeue, the drift check, a failed step's retry. */
export type TimerKind = 'requeue' | 'drift' | 'retry';

/** Why a generation is blocked: an invalid spec only a spec change can fix, or a terminal step failure. */
export type BlockedBy = 'invalid' | 'terminal';

/** The mutable state of one run of an object's workflow. */
export class ObjectEntity {
  readonly ref: ObjectRef;
  /** `namespace/name`, or `name` for a cluster-scoped object. */
  readonly where: string;
  /** This run's number (1 for the first run, +1 per continue-as-new). */
  readonly run: number;
  readonly coalescer: Coalescer;
  /** Outcomes of the latest passes, by pass number (the update handler returns them). */
  readonly outcomes = new Map<number, PassOutcome>();

  uid: string | undefined;
  /** Passes finished by this workflow, all runs. */
  passes: number;
  passesThisRun = 0;
  /** The generation that is not retried (invalid spec or terminal failure), until the spec changes. */
  blockedGeneration: number | undefined;
  blockedBy: BlockedBy;
  lastOutcome: PassOutcome | undefined;
  phase: Phase;
  conditions: readonly ConditionSpec[] = [];
  observedGeneration: number | undefined;
  steps: Record<string, StepState>;
  lastError: string | undefined;
  reconciling = false;
  finished = false;
  nowRequested = false;
  nextTimer: { kind: TimerKind; at: number } | undefined;
  timerDue = false;
  /** Resolves the promise the run's loop waits on ({@link woken}), if it waits. */
  private waker: (() => void) | undefined;
  currentGeneration: number | undefined;
  /** The plan of the newest observation (or the legacy plan until one is observed). */
  plan: ReconcilerPlan | undefined;
  /** The steps the current details show (the plan's steps, or its cleanup steps while deleting). */
  stepList: readonly StepPlan[];
  detailsTitle = 'Steps';
  /** Whether the current pass wrote status. */
  statusWritten = false;
  /** The drift-check interval the object asked for (its annotation, clamped), as last observed. */
  driftCheckIntervalMs: number | undefined;
  /** Each step's latest success (`StepContext.previous`), kept by runs of workflow-code version 4+. */
  previous: Record<string, PreviousStepResult>;
  /** The step waiting for approval now, if any (`core/approval.ts`). */
  awaiting: AwaitingApproval | undefined;
  /** The decision on {@link awaiting}, once the `decide-approval` update brought it. */
  decision: ApprovalDecision | undefined;
  /** The approvals this workflow holds, by step: valid for one generation and one preview (carried on). */
  readonly granted: Record<string, { readonly generation: number; readonly previewHash: string }>;
  /** The latest decision on a wait of this run (`step deployment approved by alice: ok`), shown in the details. */
  lastApproval: string | undefined;
  /** The running pass gave up its wait for approval to continue as new: {@link awaiting} is carried on. */
  handingOver = false;

  constructor(input: ObjectWorkflowInput, legacyPlan?: ReconcilerPlan) {
    const carried = input.carried;
    this.ref = input.ref;
    this.where = input.ref.namespace ? `${input.ref.namespace}/${input.ref.name}` : input.ref.name;
    this.run = (carried?.runs ?? 0) + 1;
    this.uid = carried?.uid ?? input.pending?.uid;
    this.passes = carried?.passes ?? 0;
    this.blockedGeneration = carried?.invalidGeneration;
    this.blockedBy = carried?.blockedBy ?? 'invalid';
    this.lastOutcome = carried?.lastOutcome;
    this.phase = this.lastOutcome?.phase ?? 'Pending';
    this.observedGeneration = this.lastOutcome?.generation;
    this.steps = { ...(this.lastOutcome?.steps ?? {}) };
    this.lastError = this.lastOutcome?.error;
    this.previous = { ...(carried?.previous ?? {}) };
    this.coalescer = new Coalescer(input.pending);
    this.plan = legacyPlan;
    this.stepList = legacyPlan?.steps ?? [];
    // A wait the previous run gave up to continue as new: shown (and decided) at once, resumed by the
    // pass whose check finds the same step, generation and preview.
    this.awaiting = carried?.approvals?.awaiting;
    this.decision = carried?.approvals?.decision;
    this.granted = { ...carried?.approvals?.granted };
  }
  /**
   * A promise the next {@link wake} resolves: what the run's loop waits on between passes (workflow-code
   * version 6 and up), instead of a `condition`. A condition is only looked at after the activation's
   * jobs, in a call of its own into the workflow sandbox, which then needs one more to find nothing
   * else unblocked; a promise resolved by the job itself resumes the loop in the same call.
   */
  woken(): Promise<void> {
    return new Promise((resolve) => (this.waker = resolve));
  }

  /** Something for the loop arrived (a request, an update, a due timer): resumes it if it waits. */
  wake(): void {
    const waker = this.waker;
    this.waker = undefined;
    waker?.();
  }

  /** The answer of the `state` query. */
  state(): ObjectState {
    const { coalescer, observedGeneration, nextTimer } = this;
    return {
      ref: this.ref,
      ...(this.uid !== undefined ? { uid: this.uid } : {}),
      phase: this.phase,
      conditions: this.conditions,
      ...(observedGeneration !== undefined ? { observedGeneration } : {}),
      ...(coalescer.wantedGeneration !== undefined || observedGeneration !== undefined
        ? { wantedGeneration: Math.max(coalescer.wantedGeneration ?? 0, observedGeneration ?? 0) }
        : {}),
      reconciling: this.reconciling,
      steps: this.steps,
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
      ...(this.lastOutcome !== undefined ? { lastOutcome: this.lastOutcome } : {}),
      ...(nextTimer ? { nextTimer: { kind: nextTimer.kind, at: new Date(nextTimer.at).toISOString() } } : {}),
      passes: this.passes,
      run: this.run,
      pending: coalescer.peek() !== undefined || this.nowRequested,
      ...(this.awaiting ? { awaitingApproval: this.awaiting } : {}),
    };
  }

  /** The markdown the Temporal UI shows as the workflow's current details. */
  details(): string {
    const { nextTimer, awaiting } = this;
    const approval = awaiting
      ? `\n\n**Awaiting approval**: step ${awaiting.step}, generation ${awaiting.generation}: ${awaiting.reason}. ` +
        `Would change: ${awaiting.preview}. Approve with \`homeostat approve\` before ${awaiting.deadline}.`
      : this.lastApproval !== undefined
        ? `\n\n**Approval**: ${this.lastApproval}.`
        : '';
    return (
      detailsMarkdown({
        ref: this.ref,
        phase: this.phase,
        pass: this.passes + (this.reconciling ? 1 : 0),
        ...(this.currentGeneration !== undefined ? { generation: this.currentGeneration } : {}),
        title: this.detailsTitle,
        plan: this.stepList,
        steps: this.steps,
        ...(nextTimer ? { nextTimer: { kind: nextTimer.kind, at: new Date(nextTimer.at).toISOString() } } : {}),
        ...(this.lastError ? { lastError: this.lastError } : {}),
      }) + approval
    );
  }

  /** The outcome of the pass now ending (number `passes + 1`). */
  outcome(result: PassResult, generation: number, extra: Partial<PassOutcome> = {}): PassOutcome {
    return {
      pass: this.passes + 1,
      result,
      phase: this.phase,
      generation,
      ...(this.uid !== undefined ? { uid: this.uid } : {}),
      steps: { ...this.steps },
      ...(this.lastError !== undefined && result !== 'ready' ? { error: this.lastError } : {}),
      statusWritten: this.statusWritten,
      ...extra,
    };
  }

  /**
   * Whether a request is for a generation that is blocked (invalid spec, terminal failure) and so
   * starts no pass. A deletion always passes, and so does a change of an owned child or of a
   * referenced object after a terminal failure: the step may have failed because of it (a child
   * drifted into a state the API server rejects an apply over, a Deployment past its progress
   * deadline, a referenced object missing), and the change may cure it. An invalid spec is cured
   * only by a spec change.
   *
   * `childCures` is asked only when a child's change meets a terminal failure: the workflow answers
   * with a version marker, so histories recorded when a child's change did not cure replay as they ran.
   */
  blocks(
    request: ReconcileRequest | undefined,
    byUpdate: boolean,
    byTimer: boolean,
    childCures: () => boolean = () => true,
  ): boolean {
    const blocked = this.blockedGeneration;
    if (
      !byUpdate &&
      !byTimer &&
      request &&
      blocked !== undefined &&
      request.uid === this.uid &&
      request.generation <= blocked &&
      request.reason !== 'deleted'
    ) {
      if (this.blockedBy !== 'terminal') return true;
      if (request.reason === 'referenced-changed') return false;
      return !(request.reason === 'child-changed' && childCures());
    }
    return byTimer && blocked !== undefined && !request && !byUpdate;
  }

  /** Records a finished pass. */
  finishPass(result: PassOutcome): void {
    this.passes += 1;
    this.passesThisRun += 1;
    // A wait ends with its pass, unless the pass gave it up to continue as new (then it is carried on).
    if (!this.handingOver) {
      this.awaiting = undefined;
      this.decision = undefined;
    }
    this.handingOver = false;
    this.lastOutcome = result;
    this.outcomes.set(result.pass, result);
    this.outcomes.delete(result.pass - 20);
  }

  /** The search attributes whose values differ from `current` (upserted only on change). */
  changedSearchAttributes(current: TypedSearchAttributes): SearchAttributeUpdatePair[] {
    const wanted: SearchAttributeUpdatePair[] = [];
    const want = <T extends string | number>(
      key: (typeof searchAttributeKeys)[keyof typeof searchAttributeKeys],
      value: T | undefined,
    ): void => {
      if (value === undefined) return;
      if (current.get(key) !== value) wanted.push({ key, value } as SearchAttributeUpdatePair);
    };
    want(searchAttributeKeys.kind, this.ref.kind);
    want(searchAttributeKeys.namespace, this.ref.namespace || '_');
    want(searchAttributeKeys.name, this.ref.name);
    want(searchAttributeKeys.phase, this.phase);
    want(searchAttributeKeys.generation, this.observedGeneration);
    return wanted;
  }

  /** The requeue or drift timer to re-arm in the next run (a retry timer belongs to its pass). */
  timerToCarry(): { timer?: { kind: 'requeue' | 'drift'; at: number } } {
    const t = this.nextTimer;
    return t && t.kind !== 'retry' ? { timer: { kind: t.kind, at: t.at } } : {};
  }

  /**
   * What continue-as-new carries into the next run (the envelope of `core/carried-state`); `upgrade`
   * when the run moves to another worker deployment version between passes (the next run then runs a
   * pass at once).
   */
  carried(lastOutcome: PassOutcome | undefined, options: { readonly upgrade?: boolean } = {}): CarriedState {
    return {
      format: carriedStateFormat,
      ...(this.uid !== undefined ? { uid: this.uid } : {}),
      passes: this.passes,
      runs: this.run,
      ...(this.blockedGeneration !== undefined
        ? { invalidGeneration: this.blockedGeneration, blockedBy: this.blockedBy }
        : {}),
      ...(lastOutcome !== undefined ? { lastOutcome } : {}),
      ...(Object.keys(this.previous).length > 0 ? { previous: this.previous } : {}),
      ...this.timerToCarry(),
      ...(options.upgrade ? { upgraded: true } : {}),
      ...this.approvalsToCarry(),
    };
  }

  /** The approvals held and the wait given up (with its decision, if one came) for the next run. */
  private approvalsToCarry(): Pick<CarriedState, 'approvals'> {
    const { granted, awaiting, decision } = this;
    if (Object.keys(granted).length === 0 && awaiting === undefined) return {};
    return {
      approvals: {
        ...(Object.keys(granted).length > 0 ? { granted: { ...granted } } : {}),
        ...(awaiting !== undefined ? { awaiting } : {}),
        ...(awaiting !== undefined && decision !== undefined ? { decision } : {}),
      },
    };
  }
}
