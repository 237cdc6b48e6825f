/**
 * The per-object entity workflow: one long-lived workflow per Kubernetes object that runs
 * observe → compare → act → repeat as durable, retried activities (docs/architecture.md).
 *
 * A pass: observe the object (read, validate the spec, add the finalizer if there is cleanup) → run the reconciler's steps
 * in dependency order, independent steps in parallel, each retried with backoff → write status only
 * when it changed. A deleted object runs the cleanup steps, loses its finalizer and the workflow
 * completes. Requests are coalesced; requeue and drift checks are durable timers; the run continues as
 * new when the server suggests it or after a bounded number of passes, carrying the newest request.
 */
import {
  allHandlersFinished,
  condition,
  patched,
  log,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { InvalidSpecDetails, Observation, StepActivityResult } from '../core/activity-contract';
import { defaultStepHeartbeatTimeout, durationMs, findPlan, type PlanRegistry } from '../core/plan';
import { adoptionRefusedType, invalidSpecType, stepFailedType, terminalStepType } from '../core/errors';
import type { ObjectWorkflowInput, PassOutcome } from '../core/definitions';
import { carriedStateFormat, readCarriedState } from '../core/carried-state';
import { codeVersionOf, workflowCodeVersion } from '../core/workflow-code-version';
import { coreActivities, observeWithLeadingSteps } from './bookkeeping';
import { ObjectEntity } from './object-entity';
import { setObjectHandlers } from './object-handlers';
import { passMetrics } from './pass-metrics';
import { startPassTrace } from './pass-trace';
import { desiredStatus, succeededPassStatus } from './object-state';
import { passPriorityKey, passPriorityKeys } from './pass-priority';
import { PassTimer } from './pass-timer';
import { continueAsNewOnTarget, upgradeWanted } from './run-handoff';
import { SpecMemory } from './spec-memory';
import { StatusWriter } from './status-writer';
import { StepRunner, appFailure } from './step-runner';
import { workflowApprovalGate } from './approval-gate';

/** The per-object workflow function. */
export type ObjectWorkflow = (input: ObjectWorkflowInput) => Promise<PassOutcome | undefined>;

/** Passes per run before continue-as-new when the plan does not say. */
export const defaultMaxPassesPerRun = 500;

/** How often a refused adoption is looked at again when the plan has no drift interval. */
const adoptionRecheckMs = 5 * 60_000;

/** Options of {@link createObjectWorkflow}. */
export interface ObjectWorkflowOptions {
  /**
   * Plans for histories recorded before plans travelled in the observe activity's result (homeostat
   * 0.1): replaying those needs the plan from somewhere. New passes always use the observed plan.
   */
  readonly legacyPlans?: PlanRegistry;
}

/**
 * Builds the object workflow. It holds no plan of its own: each pass runs the plan that the observe
 * activity returned (the worker's reconciler for the object's kind), recorded in history with the
 * observation, so any operator runs on the same workflow code and replays with the plan it ran.
 *
 * The parts: {@link ObjectEntity} (the run's state), {@link StatusWriter} (change-only status writes),
 * {@link StepRunner} (steps, retries, backoff, approval gates), {@link PassTimer} (requeue and drift
 * timers); this function wires them to Temporal and runs the loop: wait for a request or a timer, run
 * a pass, arm the next timer, continue as new when the history is long enough.
 */
export function createObjectWorkflow(options: ObjectWorkflowOptions = {}): ObjectWorkflow {
  const objectWorkflow = async function objectWorkflow(input: ObjectWorkflowInput): Promise<PassOutcome | undefined> {
    // Written by the previous run's build, maybe another one: refused (a failed task) if unreadable.
    if (input.carried !== undefined) readCarriedState(input.carried);
    const ref = input.ref;
    const legacyPlan = options.legacyPlans ? findPlan(options.legacyPlans, ref) : undefined;
    const entity = new ObjectEntity(input, legacyPlan);
    const where = entity.where;
    // The workflow-code version this run follows (its input says; `core/workflow-code-version`): a run
    // recorded under an older version replays as it ran, and its continue-as-new moves to this one.
    const codeVersion = codeVersionOf(input);
    /** Observe, status writes and the finalizer as local activities, and the steps that ask for it (1+). */
    const localActivities = codeVersion >= 1;
    /** Observe runs the plan's leading chain of local steps (2+). */
    const fuseLeadingSteps = codeVersion >= 2;
    /** A drift check keeps a running timer that fires inside its jitter window (3+). */
    const driftTimerWindow = codeVersion >= 3;
    /**
     * Leading steps' outcomes and an unchanged status taken in the same turn, without promises; the loop
     * woken by what arrives rather than by a condition (6+).
     */
    const atOnce = codeVersion >= 6;

    const showDetails = (): void => setCurrentDetails(entity.details());
    const upsertIfChanged = (): void => {
      const wanted = entity.changedSearchAttributes(workflowInfo().typedSearchAttributes);
      if (wanted.length > 0) upsertSearchAttributes(wanted);
    };
    const status = new StatusWriter(entity, (request, summary) =>
      coreActivities(localActivities, summary).writeStatus(request),
    );
    const handOver = (): boolean => workflowInfo().continueAsNewSuggested || upgrade();
    const approvals =
      codeVersion >= 5 ? workflowApprovalGate(entity, status, showDetails, upsertIfChanged, handOver) : undefined;
    /** The priority key of the running pass's regular steps (`pass-priority.ts`). */
    let passPriority: number = passPriorityKeys.normal;
    const steps = new StepRunner(
      entity,
      status,
      {
        execute: (type, step, stepOptions, stepInput) => {
          // A pass someone waits for goes before drift checks on the task queue (5+; `pass-priority.ts`),
          // keeping the object's fairness key and weight.
          const prioritized =
            codeVersion >= 5
              ? { ...stepOptions, priority: { ...workflowInfo().priority, priorityKey: passPriority } }
              : stepOptions;
          const proxy =
            localActivities && step.execution === 'local'
              ? proxyLocalActivities(stepOptions)
              : proxyActivities(
                  // A regular step in a current run gets a heartbeat timeout (the worker heartbeats for
                  // it): a worker that dies under it is noticed in seconds, not at its start-to-close.
                  localActivities ? { heartbeatTimeout: defaultStepHeartbeatTimeout, ...prioritized } : prioritized,
                );
          return (proxy[type] as (i: typeof stepInput) => Promise<StepActivityResult>)(stepInput);
        },
        wait: (until, ms) => condition(until, ms),
        continueAsNewSuggested: () => workflowInfo().continueAsNewSuggested,
        now: () => Date.now(),
        showDetails,
        upsert: upsertIfChanged,
      },
      {
        holdDependents: codeVersion >= 4,
        previousResults: codeVersion >= 4,
        specByDigest: codeVersion >= 5,
        leadingAtOnce: atOnce,
      },
      approvals, // steps with an approval rule wait for a decision there (5+)
    );
    /** An unchanged spec recorded once per run, by digest after that (5+). */
    const specs = new SpecMemory(codeVersion >= 5);
    const timer = new PassTimer(
      entity,
      (ms) => sleep(ms, { summary: 'requeue / drift check' }),
      () => Date.now(),
    );

    setObjectHandlers(entity);

    /** The drift-check interval: the object's own (annotation) or its plan's. */
    const driftMs = (): number | undefined =>
      entity.plan?.driftCheckInterval === undefined
        ? undefined
        : (entity.driftCheckIntervalMs ?? durationMs(entity.plan.driftCheckInterval, 0));
    /** The drift timer ±10%, so objects created together do not check in lockstep (version 0: exact). */
    const jittered = (ms: number): number => (localActivities ? Math.round(ms * (0.9 + 0.2 * Math.random())) : ms);
    const maxPasses = (): number => entity.plan?.maxPassesPerRun ?? defaultMaxPassesPerRun;

    /** One pass: observe, compare, act, report. */
    const runPass = async (): Promise<PassOutcome> => {
      entity.statusWritten = false;
      entity.detailsTitle = 'Steps';
      entity.stepList = entity.plan?.steps ?? [];
      let obs: Observation;
      try {
        obs = fuseLeadingSteps
          ? await observeWithLeadingSteps(
              {
                ref,
                ...specs.observeInput(),
                ...(approvals !== undefined ? { approvalRules: true } : {}),
                leadingSteps: {
                  status: { pass: entity.passes + 1 },
                  ...(codeVersion >= 4 && entity.uid !== undefined && Object.keys(entity.previous).length > 0
                    ? { previous: { uid: entity.uid, steps: { ...entity.previous } } }
                    : {}),
                },
              },
              `observe ${ref.kind} ${where}, and its leading local steps`,
            )
          : await coreActivities(localActivities, `observe ${ref.kind} ${where}`).observeObject({ ref });
      } catch (err) {
        const failure = appFailure(err);
        if (failure.type !== invalidSpecType) {
          entity.lastError = `observe: ${failure.message ?? String(err)}`;
          return entity.outcome('degraded', entity.currentGeneration ?? 0);
        }
        const snapshot = (failure.details?.[0] as InvalidSpecDetails | undefined)?.data;
        if (!snapshot) throw err;
        if (entity.uid !== snapshot.uid) entity.uid = snapshot.uid;
        status.observed(snapshot.status, snapshot.resourceVersion);
        entity.currentGeneration = snapshot.generation;
        entity.lastError = failure.message ?? 'invalid spec';
        entity.blockedGeneration = snapshot.generation;
        entity.blockedBy = 'invalid';
        entity.steps = {};
        await status.writeIfChanged(
          snapshot.uid,
          desiredStatus({ phase: 'Invalid', generation: snapshot.generation, message: entity.lastError }),
          { type: 'Warning', reason: invalidSpecType, note: entity.lastError },
        );
        entity.observedGeneration = snapshot.generation;
        return entity.outcome('invalid', snapshot.generation);
      }
      if (!obs.found) {
        log.info('object is gone; workflow completes', { ref });
        return entity.outcome('gone', 0);
      }
      obs = specs.complete(obs);
      // Histories recorded before plans travelled with the observation have none: use the legacy plan.
      const observedPlan = obs.plan ?? legacyPlan;
      if (!observedPlan) throw new Error(`the observation of ${ref.kind} ${where} carries no plan`);
      entity.plan = observedPlan;
      entity.stepList = observedPlan.steps;
      if (entity.uid !== undefined && obs.uid !== entity.uid) {
        // Same name, new UID: a new object. The old one is gone (its finalizer was removed): start over.
        log.info('object was recreated; starting over', { ref, oldUid: entity.uid, uid: obs.uid });
        entity.blockedGeneration = undefined;
        entity.lastError = undefined;
        entity.previous = {};
      }
      entity.uid = obs.uid;
      // Observe may have written this pass's status already (it ran every step): the write below then
      // finds it there and is skipped.
      status.observed(obs.status, obs.resourceVersion);
      if (obs.statusWritten) entity.statusWritten = true;
      entity.currentGeneration = obs.generation;
      entity.driftCheckIntervalMs = obs.driftCheckIntervalMs;

      if (obs.deleting) {
        if (!obs.hasFinalizer) return entity.outcome('deleted', obs.generation);
        entity.detailsTitle = 'Cleanup';
        await status.writeIfChanged(obs.uid, desiredStatus({ phase: 'Deleting', generation: obs.generation }));
        upsertIfChanged();
        const cleanup = await steps.runSteps(observedPlan, observedPlan.cleanup ?? [], obs);
        if (cleanup.superseded && codeVersion >= 5) return entity.outcome('superseded', obs.generation); // next pass
        if (cleanup.failed) {
          await status.writeIfChanged(
            obs.uid,
            desiredStatus({
              phase: 'Deleting',
              generation: obs.generation,
              message: `cleanup failed: ${cleanup.failed.message}`,
            }),
          );
          return entity.outcome('degraded', obs.generation);
        }
        await coreActivities(localActivities, `remove finalizer · ${ref.kind} ${where}`).removeFinalizer({
          ref,
          uid: obs.uid,
          event: {
            type: 'Normal',
            reason: 'Finalized',
            action: 'Delete',
            note: 'Cleanup done, finalizer removed',
            dedupKey: 'finalized',
          },
        });
        return entity.outcome('deleted', obs.generation);
      }

      if (entity.blockedGeneration !== undefined && obs.generation > entity.blockedGeneration) {
        entity.blockedGeneration = undefined;
      }
      const result = await steps.runSteps(observedPlan, observedPlan.steps, obs, obs.leading);
      if (result.superseded) return entity.outcome('superseded', obs.generation);
      if (result.failed?.refused) {
        // Adoption refused: nothing changed and backoff cannot help, but the conflict can go away
        // without any event homeostat watches (an unowned object deleted, a role dropped): look again
        // at the drift interval instead of blocking the generation.
        await status.writeIfChanged(
          obs.uid,
          desiredStatus({
            phase: 'Degraded',
            generation: obs.generation,
            failedStep: result.failed.step,
            message: result.failed.message,
            terminal: true,
            adoptionRefused: true,
          }),
          { type: 'Warning', reason: adoptionRefusedType, note: result.failed.message },
        );
        entity.observedGeneration = obs.generation;
        entity.blockedGeneration = undefined;
        return entity.outcome('degraded', obs.generation, { requeueAfterMs: driftMs() ?? adoptionRecheckMs });
      }
      if (result.failed) {
        if (result.failed.terminal) {
          entity.blockedGeneration = obs.generation;
          entity.blockedBy = 'terminal';
        }
        await status.writeIfChanged(
          obs.uid,
          desiredStatus({
            phase: 'Degraded',
            generation: obs.generation,
            failedStep: result.failed.step,
            message: result.failed.message,
            terminal: result.failed.terminal,
            ...(result.fields ? { fields: result.fields } : {}),
          }),
          {
            type: 'Warning',
            reason: result.failed.terminal ? terminalStepType : stepFailedType,
            note: result.failed.message,
          },
        );
        entity.observedGeneration = obs.generation;
        return entity.outcome('degraded', obs.generation);
      }
      entity.lastError = undefined;
      // A step whose work is still under way (a rollout) makes the pass Reconciling, not Ready; the next
      // pass comes from its child's status change (or a requeue). Per-step conditions came later than
      // progress: histories recorded before them replay the old status. Runs that fuse leading steps skip
      // the patch call (its marker's search-attribute upsert is an action per run); runs recorded with
      // the marker must keep calling it (an unmatched marker is nondeterminism).
      const under = result.progressing;
      const passed = succeededPassStatus(
        obs.generation,
        observedPlan.steps.map((s) => ({
          name: s.name,
          ...(entity.steps[s.name]?.message ? { message: entity.steps[s.name]!.message! } : {}),
          ...(entity.steps[s.name]?.progressing !== undefined
            ? { progressing: entity.steps[s.name]!.progressing! }
            : {}),
          ...(entity.steps[s.name]?.waitingFor !== undefined ? { waitingFor: entity.steps[s.name]!.waitingFor! } : {}),
        })),
        result.fields,
        fuseLeadingSteps || patched('status-step-conditions'),
      );
      if (!(atOnce && status.unchangedAtOnce(passed.status))) {
        await status.writeIfChanged(obs.uid, passed.status, passed.event);
      }
      entity.observedGeneration = obs.generation;
      return entity.outcome(
        under ? 'reconciling' : 'ready',
        obs.generation,
        result.requeueAfterMs !== undefined ? { requeueAfterMs: result.requeueAfterMs } : {},
      );
    };

    const metrics = passMetrics(ref);
    const carriedTimer = input.carried?.timer;
    if (carriedTimer) timer.arm(carriedTimer.kind, Math.max(0, carriedTimer.at - Date.now()));
    // A run that moved here from another worker version runs the plan of this one at once (and the
    // request or timer that woke the previous run, which left its pass to this one).
    if (input.carried?.upgraded === true && !input.pending) entity.timerDue = true;
    showDetails();
    const upgrade = (): boolean => upgradeWanted(input.carried?.upgraded === true, entity.passesThisRun);

    const hasWork = (): boolean =>
      entity.coalescer.peek() !== undefined || entity.nowRequested || entity.timerDue || upgrade();
    // A move to a new worker version arrives with an activation, not a job: one standing condition (6+).
    if (atOnce) void condition(upgrade).then(() => entity.wake());
    for (;;) {
      if (!atOnce) await condition(hasWork);
      else while (!hasWork()) await entity.woken();
      if (upgrade() && !entity.nowRequested) {
        // Between passes: move to the new version, whose first pass serves the request or timer that
        // woke this run. An update waiting for a pass is served here first (its pass runs below).
        await condition(() => allHandlersFinished() || entity.nowRequested);
        if (!entity.nowRequested) {
          const pending = entity.coalescer.take();
          log.info('continuing as new onto the new worker version', { ref, run: entity.run });
          return continueAsNewOnTarget({
            ref,
            ...(pending ? { pending } : {}),
            carried: entity.carried(entity.lastOutcome, { upgrade: true }),
            codeVersion: workflowCodeVersion,
          });
        }
      }
      const request = entity.coalescer.take();
      const byUpdate = entity.nowRequested;
      const byTimer = entity.timerDue;
      entity.nowRequested = false;
      entity.timerDue = false;
      // Invalid spec: no retries until the spec changes; terminal failure: until the spec, a child or
      // a referenced object changes (a child's change cured it only from this marker on).
      if (entity.blocks(request, byUpdate, byTimer, () => patched('child-change-cures-terminal'))) continue;

      entity.reconciling = true;
      const timerKind = entity.nextTimer?.kind;
      passPriority = passPriorityKey({ byUpdate, timerKind: byTimer ? timerKind : undefined, reason: request?.reason });
      entity.nextTimer = undefined;
      showDetails();
      let result: PassOutcome;
      const trigger = byUpdate ? 'update' : byTimer ? timerKind : request?.reason;
      const passTrace = startPassTrace(ref, entity.passes + 1); // its activities join the request's trace
      try {
        result = await runPass();
      } catch (err) {
        // A terminal activity failure outside the steps (e.g. a rejected status patch): report it and
        // wait for the next request; anything else is a bug and fails the workflow task.
        if ((err as { name?: string }).name !== 'ActivityFailure') throw err;
        entity.lastError = appFailure(err).message ?? String(err);
        result = entity.outcome('degraded', entity.currentGeneration ?? 0);
      }
      entity.reconciling = false;
      const traceIds = passTrace.end(result, trigger);
      metrics.record(result.result, (Date.now() - passTrace.startMs) / 1000, result.requeueAfterMs);
      entity.finishPass(result);
      upsertIfChanged();
      log.info('pass finished', {
        ref,
        pass: result.pass,
        result: result.result,
        generation: result.generation,
        trigger,
        ...traceIds,
      });

      if (result.result === 'gone' || result.result === 'deleted') {
        showDetails();
        entity.finished = true;
        await condition(allHandlersFinished);
        const next = entity.coalescer.peek();
        if (next && next.uid !== entity.uid && next.reason !== 'deleted') {
          // A new object with the same name was requested meanwhile: start over in a fresh run.
          return continueAsNewOnTarget({
            ref,
            pending: next,
            carried: { format: carriedStateFormat, passes: entity.passes, runs: entity.run },
            codeVersion: workflowCodeVersion,
          });
        }
        return result;
      }

      if (entity.blockedGeneration === undefined) {
        const requeue = result.requeueAfterMs;
        const drift = driftMs();
        if (requeue !== undefined && (drift === undefined || requeue < drift)) timer.arm('requeue', requeue);
        else if (drift !== undefined) {
          const delay = jittered(drift);
          timer.arm('drift', delay, driftTimerWindow ? { min: drift * 0.9, max: drift * 1.1 } : undefined);
        }
      }
      showDetails();

      if (entity.passesThisRun >= maxPasses() || workflowInfo().continueAsNewSuggested) {
        await condition(() => allHandlersFinished() || entity.nowRequested);
        if (entity.nowRequested) continue; // an update waits for a pass: serve it first
        const pending = entity.coalescer.take();
        log.info('continuing as new', {
          ref,
          passes: entity.passes,
          run: entity.run,
          carriesRequest: pending !== undefined,
        });
        return continueAsNewOnTarget({
          ref,
          ...(pending ? { pending } : {}),
          carried: entity.carried(result),
          codeVersion: workflowCodeVersion,
        });
      }
    }
  };
  // PINNED (a run moves only at a continue-as-new) is the versioned worker's default (workers/create-worker.ts),
  // not declared here: Temporal refuses a declared behavior from an unversioned worker.
  return objectWorkflow;
}
