/**
 * The approval gate before a step with an approval rule (`core/approval.ts`): check the rule (the
 * `checkApproval` activity, which also writes the `AwaitingApproval` status when it asks), then wait
 * for a decision with `condition` — one timer, no polling — until it comes, a newer request supersedes
 * the pass (a spec change voids the wait), or the timeout ends it with nothing done. What touches
 * Temporal comes in as {@link ApprovalEffects}, so the gate runs unchanged in the workflow and in tests.
 */
import { condition, proxyActivities, sleep } from '@temporalio/workflow';
import {
  approvalCheckActivityType,
  approvedCondition,
  decisionText,
  defaultApprovalTimeout,
  type ApprovalCheck,
  type ApprovalCheckInput,
} from '../core/approval';
import { specChangedType } from '../core/errors';
import { durationMs, type StepPlan } from '../core/plan';
import type { ObjectEntity } from './object-entity';
import { desiredStatus } from './object-state';
import type { StatusWriter } from './status-writer';
import { appFailure, isTerminalFailure, retryAfterOf } from './step-runner-failure';

/** What the gate needs from the workflow. */
export interface ApprovalEffects {
  /** Runs the `checkApproval` activity. */
  check(input: ApprovalCheckInput): Promise<ApprovalCheck>;
  /** Waits until `until()` holds (true) or `ms` pass (false): the workflow's `condition`. */
  wait(until: () => boolean, ms: number): Promise<boolean>;
  /** The workflow clock, in epoch milliseconds. */
  now(): number;
  /** The run's state changed: refresh the Temporal UI's current details. */
  showDetails(): void;
  /** Upserts the search attributes that changed (the phase). */
  upsert(): void;
  /**
   * Whether the run should continue as new now (its history is long, or its worker deployment's target
   * version changed): a wait gives way, and the next run resumes it.
   */
  handOver(): boolean;
  /**
   * Ends the workflow task that received a decision, so that the decision (the accepted update, with
   * its approver and comment) is in history before anything acts on it: the workflow's `sleep(1)`.
   */
  settle(): Promise<void>;
}

/** How the gate ended: the step may run, or the pass gives way, or the step ends with nothing done. */
export type GateOutcome =
  | { readonly run: true }
  | { readonly superseded: string }
  | {
      readonly failed: string;
      /** Whether asking again cannot help (a rejection, a timeout, a check that failed terminally). */
      readonly terminal: boolean;
      /** When the API server said to come back (Retry-After), for a check that failed retryably. */
      readonly retryAfterMs?: number;
    };

/** The approval gate of one run. */
export class ApprovalGate {
  constructor(
    private readonly entity: ObjectEntity,
    private readonly status: StatusWriter,
    private readonly effects: ApprovalEffects,
  ) {}

  /** Checks `step`'s rule for this pass and, when it asks, waits for a decision. */
  async before(step: StepPlan, generation: number, uid: string, deleting: boolean): Promise<GateOutcome> {
    const { entity, effects } = this;
    const granted = entity.granted[step.name];
    let check: ApprovalCheck;
    try {
      check = await effects.check({
        ref: entity.ref,
        step: step.name,
        generation,
        uid,
        pass: entity.passes + 1,
        knownPhase: entity.phase,
        ...(granted?.generation === generation ? { grantedHash: granted.previewHash } : {}),
      });
    } catch (err) {
      const failure = appFailure(err);
      if (failure.type === specChangedType) return { superseded: failure.message ?? 'the spec changed' };
      // Judged as a step's failure is: terminal when the activity said retrying cannot help.
      const retryAfterMs = retryAfterOf(failure);
      return {
        failed: `approval check: ${failure.message ?? String(err)}`,
        terminal: isTerminalFailure(failure),
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      };
    }
    if (check.reason === undefined || check.awaitingStatus === undefined) return { run: true };

    const timeoutMs = durationMs(step.approval?.timeout ?? defaultApprovalTimeout, 0);
    // The wait a previous run gave up to continue as new, for this very step, generation and preview:
    // resumed with its deadline, and with the decision that came meanwhile (`ObjectEntity` restored both).
    const before = entity.awaiting;
    const resumed =
      before?.step === step.name && before.generation === generation && before.previewHash === check.previewHash;
    entity.awaiting = {
      step: step.name,
      generation,
      previewHash: check.previewHash,
      reason: check.reason,
      preview: check.preview,
      deadline: resumed ? before.deadline : new Date(effects.now() + timeoutMs).toISOString(),
    };
    if (!resumed) entity.decision = undefined;
    // The activity wrote the AwaitingApproval status: known as written, not written again.
    this.status.observed(check.awaitingStatus, '');
    entity.phase = check.awaitingStatus.phase;
    entity.conditions = check.awaitingStatus.conditions;
    effects.upsert();
    effects.showDetails();
    const decided = await effects.wait(
      () => entity.decision !== undefined || entity.coalescer.supersedes(uid, generation) || effects.handOver(),
      Math.max(0, Date.parse(entity.awaiting.deadline) - effects.now()),
    );
    // Set by the update handler while the wait ran (or before it, in a run that resumed the wait).
    const decision = entity.decision;
    if (decision === undefined && decided && effects.handOver()) {
      // Continue as new with the wait (and any decision that comes before): the next run resumes it.
      entity.handingOver = true;
      return { superseded: `the wait for approval of step ${step.name} moves to the next run` };
    }
    entity.awaiting = undefined;
    entity.decision = undefined;
    effects.showDetails();
    if (decision === undefined) {
      if (decided) return { superseded: `a newer request voided the wait for approval of generation ${generation}` };
      const message = `approval timed out after ${step.approval?.timeout ?? defaultApprovalTimeout}; nothing done`;
      await this.record(uid, generation, step.name, deleting, { timedOut: message }, message, 'ApprovalTimedOut');
      return { failed: message, terminal: true };
    }
    // The decision is in history only once the workflow task that accepted it completes. A task that
    // went on to run the step and remove the finalizer would end the run in the same completion, and
    // the server refuses a closing completion while a new event waits (the object's own watch events
    // do): the task fails, the accepted update is dropped with it (the caller sees "workflow task
    // failure"), and the step would have run on a decision history never kept. One timer ends the task
    // first; only then is the decision written to status and acted on.
    await effects.settle();
    const text = decisionText(decision);
    if (decision.decision === 'reject') {
      const message = `${text}; nothing done`;
      await this.record(uid, generation, step.name, deleting, { decided: decision }, message, 'ApprovalRejected');
      return { failed: message, terminal: true };
    }
    entity.granted[step.name] = { generation, previewHash: decision.previewHash };
    await this.record(uid, generation, step.name, deleting, { decided: decision }, undefined, 'Approved');
    return { run: true };
  }

  /**
   * Writes the decision into status: the `Approved` condition (who and why) beside the phase the pass
   * goes on in (or ends in: `Degraded`, terminal), with an Event naming it.
   */
  private async record(
    uid: string,
    generation: number,
    step: string,
    deleting: boolean,
    state: Parameters<typeof approvedCondition>[2],
    failure: string | undefined,
    reason: string,
  ): Promise<void> {
    const condition = approvedCondition(generation, step, state);
    this.entity.lastApproval = `${condition.message} (generation ${generation})`;
    const base =
      failure !== undefined
        ? desiredStatus({ phase: 'Degraded', generation, failedStep: step, message: failure, terminal: true })
        : desiredStatus({ phase: deleting ? 'Deleting' : 'Reconciling', generation });
    await this.status.writeIfChanged(
      uid,
      { ...base, conditions: [...base.conditions, condition] },
      {
        type: failure === undefined ? 'Normal' : 'Warning',
        reason,
        note: condition.message.slice(0, 1000),
        // Its own key: a later write of the same phase in this pass (Reconciling after a failed round) keeps its Event.
        dedupKey: `${generation}/${reason}/${step}/${this.entity.passes + 1}`,
      },
    );
    this.effects.upsert();
  }
}

/** The gate of a workflow run: the `checkApproval` activity, `condition` for the wait, the workflow clock. */
export function workflowApprovalGate(
  entity: ObjectEntity,
  status: StatusWriter,
  showDetails: () => void,
  upsert: () => void,
  handOver: () => boolean,
): ApprovalGate {
  return new ApprovalGate(entity, status, {
    check: (input) =>
      proxyActivities<Record<typeof approvalCheckActivityType, (i: ApprovalCheckInput) => Promise<ApprovalCheck>>>({
        startToCloseTimeout: '2 minutes',
        retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 3 },
        summary: `approval check · ${input.step} · ${entity.ref.kind} ${entity.where} gen ${input.generation}`,
      })[approvalCheckActivityType](input),
    wait: (until, ms) => condition(until, ms),
    now: () => Date.now(),
    showDetails,
    upsert,
    handOver,
    settle: () => sleep(1),
  });
}
