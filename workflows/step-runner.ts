/**
 * Runs a pass's steps: in dependency order, independent ones in parallel, each in rounds of
 * server-side attempts with workflow backoff between rounds, until it succeeds, fails terminally,
 * refuses an adoption or is superseded by a newer request. What touches Temporal (running the
 * activity, waiting, the clock) comes in as {@link StepRunnerEffects}, so the runner is unit-tested
 * with a fake clock and fake activities, and runs unchanged in the workflow.
 */
import type { ActivityOptions } from '@temporalio/common';
import type { LeadingStepOutcome, ObservedObject, StepActivityResult, StepInput } from '../core/activity-contract';
import type { StatusFields, StepState } from '../core/definitions';
import { defaultStepTimeout, runnableSteps, stepActivityType, type ReconcilerPlan, type StepPlan } from '../core/plan';
import type { StepOutputs } from '../core/reconciler';
import { adoptionRefusedType, specChangedType, terminalFailureTypes as terminalTypes } from '../core/errors';
import type { ObjectEntity } from './object-entity';
import { backoffMs, desiredStatus } from './object-state';
import type { StatusWriter } from './status-writer';
import { appFailure, type FailureLike, isTerminalFailure, retryAfterOf } from './step-runner-failure';
import type { ApprovalGate } from './approval-gate';

export { appFailure, type FailureLike } from './step-runner-failure';

/** What the step runner needs from the workflow. */
export interface StepRunnerEffects {
  /** Runs a step's activity (`type`) with `options`, as a local activity when the step and the run allow it. */
  execute(type: string, step: StepPlan, options: ActivityOptions, input: StepInput): Promise<StepActivityResult>;
  /** Waits until `until()` holds (true) or `ms` pass (false): the workflow's `condition`. */
  wait(until: () => boolean, ms: number): Promise<boolean>;
  /** Whether the server suggests continue-as-new (a long-failing step then gives way). */
  continueAsNewSuggested(): boolean;
  /** The workflow clock, in epoch milliseconds. */
  now(): number;
  /** The run's state changed: refresh the Temporal UI's current details. */
  showDetails(): void;
  /** Upserts the search attributes that changed. */
  upsert(): void;
}

/** How one step ended. */
export interface StepRun {
  readonly state: StepState;
  readonly terminal: boolean;
  readonly refused?: boolean;
  readonly superseded: boolean;
  readonly result?: StepActivityResult;
}

/**
 * How a list of steps ended: the first failure, whether a newer request superseded it, the shortest
 * requeue, the steps whose work is still under way, and the status fields the steps reported.
 */
export interface StepsRun {
  readonly failed?: { step: string; message: string; terminal: boolean; refused?: boolean };
  readonly superseded: boolean;
  readonly requeueAfterMs?: number;
  /** Succeeded steps that reported progress still to come, in plan order. */
  readonly progressing?: readonly { readonly step: string; readonly message: string }[];
  /** The status fields of the succeeded steps, merged in plan order (a later step's value wins). */
  readonly fields?: StatusFields;
}

/** Behaviour of a {@link StepRunner} that depends on the run's workflow-code version. */
export interface StepRunnerBehaviour {
  /**
   * Whether a step that succeeds but reports `progressing` holds back the steps that depend on it
   * (directly or not) until a later pass finds it finished (workflow-code version 4 and up). Earlier
   * runs started its dependents at once.
   * @default false
   */
  readonly holdDependents?: boolean;
  /**
   * Whether each step's input carries the step's previous success in this workflow (`previous`;
   * workflow-code version 4 and up).
   * @default false
   */
  readonly previousResults?: boolean;
  /**
   * Whether a regular step's input (recorded in history) names the observed spec by its digest rather
   * than carrying it, the step re-reading the object; a step that finds the spec changed (`SpecChanged`)
   * supersedes the pass (workflow-code version 5 and up). Local steps' inputs are not recorded: they
   * keep the spec. The pass after one a changed spec superseded carries the spec in its steps' inputs,
   * so it cannot be superseded that way: a spec that changes faster than a pass runs (a busy worker, a
   * script) is still reconciled, one pass behind its newest change, instead of never.
   * @default false
   */
  readonly specByDigest?: boolean;
  /**
   * Whether a step whose first attempt observe already ran and succeeded (a leading local step) is
   * taken in the same turn, without a promise of its own (workflow-code version 6 and up). The steps
   * end the same way and issue the same commands; each promise of workflow code costs the SDK a stack
   * trace (its promise hook), which a drift check that finds nothing to do paid about fifteen times for
   * three leading steps. Earlier runs took each outcome through `runStep`'s promise and a race.
   * @default false
   */
  readonly leadingAtOnce?: boolean;
}

/** Runs steps for one object's workflow run. */
export class StepRunner {
  constructor(
    private readonly entity: ObjectEntity,
    private readonly status: StatusWriter,
    private readonly effects: StepRunnerEffects,
    private readonly behaviour: StepRunnerBehaviour = {},
    /** The approval gate (workflow-code version 5 and up); without it a step's approval rule is not asked. */
    private readonly approvals?: ApprovalGate,
  ) {}

  /** Whether the steps being run are cleanup steps of an object being deleted. */
  private deleting = false;
  /** The gated steps whose rule asked for approval when the pass observed (undefined: not asked). */
  private asked: readonly string[] | undefined;
  /** Whether a step of the last pass found the spec changed (`SpecChanged`): the next pass carries the spec. */
  private specOutran = false;

  /** The activity options of a step: its timeouts, and one round of its retry policy. */
  static optionsOf(step: StepPlan, summary: string): ActivityOptions {
    const retry = step.retry;
    return {
      startToCloseTimeout: step.startToCloseTimeout ?? defaultStepTimeout,
      ...(step.heartbeatTimeout !== undefined ? { heartbeatTimeout: step.heartbeatTimeout } : {}),
      retry: {
        initialInterval: retry?.initialInterval ?? '1 second',
        backoffCoefficient: retry?.backoffCoefficient ?? 2,
        maximumInterval: retry?.maximumInterval ?? '5 minutes',
        maximumAttempts: retry?.attemptsPerRound ?? 3,
        nonRetryableErrorTypes: [...terminalTypes, ...(retry?.nonRetryableErrorTypes ?? [])],
      },
      summary,
    };
  }

  /** Records a step's success after `attempts` attempts in all, and its result for the next pass. */
  private succeeded(step: StepPlan, generation: number, result: StepActivityResult, attempts: number): StepRun {
    const { entity } = this;
    const state: StepState = {
      status: 'succeeded',
      attempts,
      ...(result.message !== undefined ? { message: result.message } : {}),
      ...(result.requeueAfterMs !== undefined ? { requeueAfterMs: result.requeueAfterMs } : {}),
      ...(result.progressing !== undefined ? { progressing: result.progressing } : {}),
    };
    entity.steps[step.name] = state;
    if (this.behaviour.previousResults) {
      entity.previous[step.name] = {
        generation,
        ...(result.outputs !== undefined ? { outputs: result.outputs } : {}),
        ...(result.message !== undefined ? { message: result.message } : {}),
      };
    }
    return { state, terminal: false, superseded: false, result };
  }

  /**
   * Runs one step (rounds of server-side attempts, then workflow backoff) until success or terminal.
   * `first` is the outcome of an attempt observe already ran (a leading local step): a success ends
   * the step at once; a failure counts as an attempt, ends it when terminal, and otherwise the step
   * runs its rounds as usual.
   */
  async runStep(
    plan: ReconcilerPlan,
    step: StepPlan,
    stepInput: StepInput,
    generation: number,
    objUid: string,
    first?: LeadingStepOutcome,
  ): Promise<StepRun> {
    const { entity, effects } = this;
    const retry = step.retry;
    const options = StepRunner.optionsOf(
      step,
      `${step.summary ?? step.name} · ${entity.ref.kind} ${entity.where} gen ${generation}`,
    );
    const type = stepActivityType(plan, step.name);
    let attempts = 0;
    const succeeded = (result: StepActivityResult): StepRun => {
      attempts += result.attempt;
      const run = this.succeeded(step, generation, result, attempts);
      effects.showDetails();
      return run;
    };
    /** Records a failed round (or attempt); returns the step's end when the failure is terminal. */
    const failed = (failure: FailureLike, err: unknown, roundAttempts: number): StepRun | undefined => {
      const detail = (failure.details?.[0] ?? {}) as { attempt?: number };
      attempts += detail.attempt ?? roundAttempts;
      const message = failure.message ?? String(err);
      entity.lastError = `${step.name}: ${message}`;
      const terminal = isTerminalFailure(failure, retry?.nonRetryableErrorTypes);
      entity.steps[step.name] = { status: terminal ? 'failed' : 'retrying', attempts, message };
      effects.showDetails();
      if (!terminal) return undefined;
      const refused = failure.type === adoptionRefusedType;
      return { state: entity.steps[step.name]!, terminal: true, ...(refused ? { refused } : {}), superseded: false };
    };
    if (first && 'result' in first) return succeeded(first.result);
    if (first) {
      const end = failed(first.failure, first.failure.message, 1);
      if (end) return end;
    }
    // Observe asked the rule: only a step it asked for goes through the check (`approvalsAsked`). A
    // check that fails for a reason retrying can fix (the API server throttling, a timeout) is asked
    // again after the step's backoff (or Retry-After), as a failed round of the step would be: it does
    // not end the pass, which would leave the object Degraded until its next drift check.
    if (step.approval !== undefined && this.approvals !== undefined && (this.asked?.includes(step.name) ?? true)) {
      for (let round = 1; ; round++) {
        entity.steps[step.name] = { status: 'pending', attempts, message: 'approval check' };
        const gate = await this.approvals.before(step, generation, objUid, this.deleting);
        if ('superseded' in gate) return this.supersede(step.name, objUid, generation, attempts, gate.superseded);
        if (!('failed' in gate)) break;
        entity.lastError = `${step.name}: ${gate.failed}`;
        if (gate.terminal) {
          const state: StepState = { status: 'failed', attempts, message: gate.failed };
          entity.steps[step.name] = state;
          effects.showDetails();
          return { state, terminal: true, superseded: false };
        }
        entity.steps[step.name] = { status: 'retrying', attempts, message: gate.failed };
        effects.showDetails();
        if (await this.retryLater(step, objUid, generation, round, gate.failed, gate.retryAfterMs)) {
          return this.supersede(step.name, objUid, generation, attempts, gate.failed);
        }
      }
    }
    for (let round = 1; ; round++) {
      entity.steps[step.name] = {
        status: round === 1 && !first ? 'running' : 'retrying',
        attempts,
        ...(entity.steps[step.name]?.message ? { message: entity.steps[step.name]!.message! } : {}),
      };
      effects.showDetails();
      try {
        return succeeded(await effects.execute(type, step, options, stepInput));
      } catch (err) {
        const failure = appFailure(err);
        if (this.behaviour.specByDigest && failure.type === specChangedType) {
          this.specOutran = true;
          return this.supersede(step.name, objUid, generation, attempts + 1, failure.message ?? 'the spec changed');
        }
        const end = failed(failure, err, options.retry?.maximumAttempts || 1);
        if (end) return end;
        const message = entity.steps[step.name]!.message!;
        const superseded = await this.retryLater(step, objUid, generation, round, message, retryAfterOf(failure));
        if (superseded) return this.supersede(step.name, objUid, generation, attempts, message);
      }
    }
  }

  /**
   * Between two rounds of a step (or two approval checks): reports the failure (`Degraded`, a
   * `StepFailed` Warning), arms the retry timer for the step's backoff or the Retry-After the failure
   * carried, and waits. True when a newer request ends the wait (and the pass), or a history grown long
   * enough for the server to suggest continue-as-new, since a step can fail for days.
   */
  private async retryLater(
    step: StepPlan,
    objUid: string,
    generation: number,
    round: number,
    message: string,
    retryAfterMs: number | undefined,
  ): Promise<boolean> {
    const { entity, effects } = this;
    await this.status.writeIfChanged(
      objUid,
      desiredStatus({ phase: 'Degraded', generation, failedStep: step.name, message }),
      { type: 'Warning', reason: 'StepFailed', note: `${step.name}: ${message}` },
    );
    effects.upsert();
    // Retry-After (429/503): the activity puts it in the details as well as in nextRetryDelay,
    // which only the server's own retries see.
    const delay = retryAfterMs ?? backoffMs(step.retry, round);
    entity.nextTimer = { kind: 'retry', at: effects.now() + delay };
    effects.showDetails();
    const superseded = await effects.wait(
      () => entity.coalescer.supersedes(objUid, generation) || effects.continueAsNewSuggested(),
      delay,
    );
    entity.nextTimer = undefined;
    return superseded;
  }

  /**
   * Ends a step as superseded: the pass gives way to the next, which is requested now if nothing is
   * pending (continue-as-new may come first: the next run then retries this generation).
   */
  private supersede(step: string, objUid: string, generation: number, attempts: number, message: string): StepRun {
    const { entity } = this;
    if (!entity.coalescer.peek()) {
      entity.coalescer.offer({ ref: entity.ref, uid: objUid, generation, resourceVersion: '', reason: 'requeue' });
    }
    const state: StepState = { status: 'failed', attempts, message: `superseded after: ${message}` };
    entity.steps[step] = state;
    return { state, terminal: false, superseded: true };
  }

  /**
   * Runs a list of steps in dependency order, independent ones in parallel. `leading`: the outcomes of
   * the first attempts observe already ran ({@link ObservedObject.leading}), taken in place of them.
   */
  async runSteps(
    plan: ReconcilerPlan,
    list: readonly StepPlan[],
    obs: ObservedObject,
    leading: readonly LeadingStepOutcome[] = [],
  ): Promise<StepsRun> {
    const { entity, effects } = this;
    this.deleting = obs.deleting;
    this.asked = obs.approvalsAsked;
    const carrySpec = this.specOutran;
    this.specOutran = false;
    const status: Record<string, StepState['status']> = {};
    for (const s of list) status[s.name] = 'pending';
    entity.stepList = list;
    entity.steps = {};
    for (const s of list) entity.steps[s.name] = { status: 'pending', attempts: 0 };
    effects.showDetails();
    const outputs: Record<string, StepOutputs> = {};
    const reported: Record<string, StatusFields> = {};
    /** The outputs of a step's dependencies, direct or not (deterministic: plan order). */
    const inputFor = (step: StepPlan): StepInput => {
      const results: Record<string, StepOutputs> = {};
      const visit = (name: string): void => {
        for (const dep of list.find((s) => s.name === name)?.dependsOn ?? []) {
          if (outputs[dep] !== undefined && results[dep] === undefined) results[dep] = outputs[dep];
          visit(dep);
        }
      };
      visit(step.name);
      const previous = this.behaviour.previousResults ? entity.previous[step.name] : undefined;
      const byDigest =
        this.behaviour.specByDigest && !carrySpec && step.execution !== 'local' && obs.specDigest !== undefined;
      return {
        ref: entity.ref,
        identity: obs.identity,
        ...(byDigest ? { specDigest: obs.specDigest } : { spec: obs.spec }),
        ...(Object.keys(results).length > 0 ? { results } : {}),
        ...(previous !== undefined ? { previous } : {}),
      };
    };
    let failed: StepsRun['failed'];
    let superseded = false;
    let requeueAfterMs: number | undefined;
    const running = new Map<string, Promise<void>>();
    /** Steps that succeeded with work still under way, holding back their dependents; and who waits on whom. */
    const holding = new Set<string>();
    const waitsFor: Record<string, string> = {};
    /** A step's end, as the loop below takes it. */
    const ended = (name: string, r: StepRun): void => {
      if (r.result?.outputs !== undefined) outputs[name] = r.result.outputs;
      if (r.result?.status !== undefined) reported[name] = r.result.status;
      status[name] = r.state.status === 'succeeded' ? 'succeeded' : 'failed';
      if (this.behaviour.holdDependents && r.state.status === 'succeeded' && r.state.progressing !== undefined) {
        holding.add(name);
      }
      if (r.result?.requeueAfterMs !== undefined) {
        requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, r.result.requeueAfterMs);
      }
      if (r.superseded) superseded = true;
      else if (r.state.status !== 'succeeded' && !failed) {
        failed = {
          step: name,
          message: r.state.message ?? 'failed',
          terminal: r.terminal,
          ...(r.refused ? { refused: true } : {}),
        };
      }
    };
    for (;;) {
      const view =
        holding.size === 0
          ? status
          : { ...status, ...Object.fromEntries([...holding].map((n) => [n, 'skipped' as const])) };
      const { start, skip } = runnableSteps(list, view);
      for (const name of skip) {
        status[name] = 'skipped';
        const deps = list.find((s) => s.name === name)?.dependsOn ?? [];
        const held = deps.map((d) => (holding.has(d) ? d : waitsFor[d])).find((d) => d !== undefined);
        const failedBelow = deps.some(
          (d) => status[d] === 'failed' || (status[d] === 'skipped' && waitsFor[d] === undefined),
        );
        if (held !== undefined && !failedBelow) {
          waitsFor[name] = held;
          entity.steps[name] = {
            status: 'skipped',
            attempts: 0,
            message: `waits for ${held} to finish: ${entity.steps[held]?.progressing ?? 'in progress'}`,
            waitingFor: held,
          };
        } else entity.steps[name] = { status: 'skipped', attempts: 0, message: 'a dependency failed' };
      }
      if (!failed && !superseded) {
        for (const name of start) {
          const step = list.find((s) => s.name === name)!;
          const first = leading.find((o) => o.step === name);
          if (this.behaviour.leadingAtOnce && first && 'result' in first) {
            ended(name, this.succeeded(step, obs.generation, first.result, first.result.attempt));
            continue;
          }
          status[name] = 'running';
          running.set(
            name,
            this.runStep(plan, step, inputFor(step), obs.generation, obs.uid, first).then((r) => {
              running.delete(name);
              ended(name, r);
            }),
          );
        }
      } else {
        for (const name of start) {
          status[name] = 'skipped';
          entity.steps[name] = {
            status: 'skipped',
            attempts: 0,
            message: superseded ? 'superseded' : 'another step failed',
          };
        }
      }
      if (running.size === 0) {
        // Nothing runs: done, unless this round skipped steps whose own dependents are still to be
        // skipped (a fails: b is skipped now, c, which needs b, next round).
        if (skip.length === 0 && start.length === 0) break;
        continue;
      }
      await Promise.race(running.values());
    }
    effects.showDetails();
    const progressing = list
      .filter((s) => status[s.name] === 'succeeded' && entity.steps[s.name]?.progressing !== undefined)
      .map((s) => ({ step: s.name, message: entity.steps[s.name]!.progressing! }));
    const fields = Object.assign({}, ...list.map((s) => reported[s.name] ?? {})) as StatusFields;
    return {
      ...(failed ? { failed } : {}),
      superseded,
      ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}),
      ...(progressing.length > 0 ? { progressing } : {}),
      ...(Object.keys(fields).length > 0 ? { fields } : {}),
    };
  }
}
