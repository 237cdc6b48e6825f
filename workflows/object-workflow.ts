/**
 * The per-object entity workflow: one long-lived workflow per Kubernetes object that runs
 * observe → compare → act → repeat as durable, retried activities (DESIGN.md).
 *
 * A pass: observe the object (read, validate the spec, add the finalizer) → run the reconciler's steps
 * in dependency order, independent steps in parallel, each retried with backoff → write status only
 * when it changed. A deleted object runs the cleanup steps, loses its finalizer and the workflow
 * completes. Requests are coalesced; requeue and drift checks are durable timers; the run continues as
 * new when the server suggests it or after a bounded number of passes, carrying the newest request.
 */
import {
  allHandlersFinished,
  condition,
  patched,
  continueAsNew,
  log,
  metricMeter,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
  type ActivityOptions,
  type LocalActivityOptions,
} from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import type {
  Activities,
  InvalidSpecDetails,
  Observation,
  StepActivityResult,
  StepInput,
} from '../core/activity-contract';
import {
  durationMs,
  findPlan,
  runnableSteps,
  stepActivityType,
  type PlanRegistry,
  type ReconcilerPlan,
  type StepPlan,
} from '../core/plan';
import type { StepOutputs } from '../core/reconciler';
import {
  reconcileMetricNames,
  reconcileNowUpdate,
  reconcileRequestedSignal,
  searchAttributeKeys,
  stateQuery,
  type ConditionSpec,
  type ObjectStatus,
  type ObjectWorkflowInput,
  type PassOutcome,
  type PassResult,
  type ReconcileNowRequest,
  type Phase,
  type StepState,
} from '../core/definitions';
import { Coalescer, backoffMs, desiredStatus, detailsMarkdown, sameRef, sameStatus } from './object-state';

/** The per-object workflow function. */
export type ObjectWorkflow = (input: ObjectWorkflowInput) => Promise<PassOutcome | undefined>;

/** Passes per run before continue-as-new when the plan does not say. */
export const defaultMaxPassesPerRun = 500;

/** Failure fields the workflow reads, by property (not instanceof). */
interface FailureLike {
  readonly message?: string;
  readonly type?: string;
  readonly nonRetryable?: boolean;
  readonly details?: readonly unknown[];
  readonly cause?: FailureLike;
}

/** The innermost failure with a type (ApplicationFailure), or the error itself. */
function appFailure(err: unknown): FailureLike {
  let f = err as FailureLike | undefined;
  while (f?.cause && f.type === undefined) f = f.cause;
  return f ?? {};
}

const terminalTypes = ['InvalidSpec', 'TerminalStepError', 'UnknownKind', 'KubernetesRejected'];

/** The failure type of `adoptionRefused()`: refused without retries, re-checked later. */
const adoptionRefusedType = 'AdoptionRefused';

/** How often a refused adoption is looked at again when the plan has no drift interval. */
const adoptionRecheckMs = 5 * 60_000;

/** Options of the observe/status/finalizer activities. */
const coreOptions: ActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
};

/**
 * The activities of a pass's own bookkeeping (observe, status, finalizer) run where `local` says: as
 * local activities in runs that started with the `local-activities` patch, as regular ones in
 * histories recorded before it (so those replay unchanged).
 */
function coreActivities(local: boolean, summary: string): Activities {
  return local
    ? proxyLocalActivities<Activities>({ ...coreOptions, summary })
    : proxyActivities<Activities>({ ...coreOptions, summary });
}

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
 */
export function createObjectWorkflow(options: ObjectWorkflowOptions = {}): ObjectWorkflow {
  return async function objectWorkflow(input: ObjectWorkflowInput): Promise<PassOutcome | undefined> {
    const ref = input.ref;
    const legacyPlan = options.legacyPlans ? findPlan(options.legacyPlans, ref) : undefined;
    /** The plan of the newest observation (or the legacy plan until one is observed). */
    let plan: ReconcilerPlan | undefined = legacyPlan;
    const where = ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
    const carried = input.carried;
    const run = (carried?.runs ?? 0) + 1;
    /**
     * Whether this run uses local activities: observe, status writes and the finalizer always, steps
     * that ask for it. Decided once per run, at its start, so a run recorded before local activities
     * replays as it ran, and a new run (or the one after continue-as-new) gets them.
     */
    const localActivities = patched('local-activities');

    let uid = carried?.uid ?? input.pending?.uid;
    let passes = carried?.passes ?? 0;
    let passesThisRun = 0;
    let blockedGeneration = carried?.invalidGeneration;
    /**
     * Why the generation is blocked: an invalid spec only a spec change can fix, or a terminal step
     * failure, which a change of a referenced object (a Secret the step read) may fix as well.
     */
    let blockedBy: 'invalid' | 'terminal' = carried?.blockedBy ?? 'invalid';
    let lastOutcome = carried?.lastOutcome;
    let phase: Phase = lastOutcome?.phase ?? 'Pending';
    let conditions: readonly ConditionSpec[] = [];
    let observedGeneration: number | undefined = lastOutcome?.generation;
    let steps: Record<string, StepState> = { ...(lastOutcome?.steps ?? {}) };
    let lastError = lastOutcome?.error;
    let reconciling = false;
    let finished = false;
    let nowRequested = false;
    let nextTimer: { kind: 'requeue' | 'drift' | 'retry'; at: number } | undefined;
    let timerDue = false;
    const timerFireTimes = new Set<number>();
    const coalescer = new Coalescer(input.pending);
    const outcomes = new Map<number, PassOutcome>();
    let currentGeneration: number | undefined;
    let stepList: readonly StepPlan[] = plan?.steps ?? [];
    let detailsTitle = 'Steps';

    const showDetails = (): void => {
      setCurrentDetails(
        detailsMarkdown({
          ref,
          phase,
          pass: passes + (reconciling ? 1 : 0),
          ...(currentGeneration !== undefined ? { generation: currentGeneration } : {}),
          title: detailsTitle,
          plan: stepList,
          steps,
          ...(nextTimer ? { nextTimer: { kind: nextTimer.kind, at: new Date(nextTimer.at).toISOString() } } : {}),
          ...(lastError ? { lastError } : {}),
        }),
      );
    };

    setHandler(reconcileRequestedSignal, (request) => {
      if (!sameRef(request.ref, ref)) {
        log.warn('reconcile request for another object ignored', { ref: request.ref });
        return;
      }
      coalescer.offer(request);
    });

    setHandler(stateQuery, () => ({
      ref,
      ...(uid !== undefined ? { uid } : {}),
      phase,
      conditions,
      ...(observedGeneration !== undefined ? { observedGeneration } : {}),
      ...(coalescer.wantedGeneration !== undefined || observedGeneration !== undefined
        ? { wantedGeneration: Math.max(coalescer.wantedGeneration ?? 0, observedGeneration ?? 0) }
        : {}),
      reconciling,
      steps,
      ...(lastError !== undefined ? { lastError } : {}),
      ...(lastOutcome !== undefined ? { lastOutcome } : {}),
      ...(nextTimer ? { nextTimer: { kind: nextTimer.kind, at: new Date(nextTimer.at).toISOString() } } : {}),
      passes,
      run,
      pending: coalescer.peek() !== undefined || nowRequested,
    }));

    setHandler(
      reconcileNowUpdate,
      async () => {
        // A pass already running may have read older state: serve the one after it.
        const target = passes + (reconciling ? 2 : 1);
        nowRequested = true;
        await condition(() => passes >= target || finished);
        return outcomes.get(target) ?? lastOutcome!;
      },
      {
        validator: (request: ReconcileNowRequest) => {
          if (!sameRef(request.ref, ref))
            throw new Error(`this workflow reconciles ${ref.kind} ${where}, not the requested object`);
          if (request.uid !== undefined && uid !== undefined && request.uid !== uid) {
            throw new Error(`unknown object: UID ${request.uid} is not ${uid}`);
          }
          if (finished) throw new Error('the object is gone; its workflow is completing');
        },
      },
    );

    const upsertIfChanged = (): void => {
      const current = workflowInfo().typedSearchAttributes;
      const wanted: SearchAttributeUpdatePair[] = [];
      const want = <T extends string | number>(
        key: (typeof searchAttributeKeys)[keyof typeof searchAttributeKeys],
        value: T | undefined,
      ): void => {
        if (value === undefined) return;
        if (current.get(key) !== value) wanted.push({ key, value } as SearchAttributeUpdatePair);
      };
      want(searchAttributeKeys.kind, ref.kind);
      want(searchAttributeKeys.namespace, ref.namespace || '_');
      want(searchAttributeKeys.name, ref.name);
      want(searchAttributeKeys.phase, phase);
      want(searchAttributeKeys.generation, observedGeneration);
      if (wanted.length > 0) upsertSearchAttributes(wanted);
    };

    // Status writes are serialized; `known` is the status as last read or written.
    let known: ObjectStatus = {};
    let statusChain: Promise<unknown> = Promise.resolve();
    let statusWritten = false;
    const writeStatusIfChanged = async (
      objUid: string,
      wanted: ReturnType<typeof desiredStatus>,
      eventFor?: { type: 'Normal' | 'Warning'; reason: string; note: string },
    ): Promise<void> => {
      const next = statusChain.then(async () => {
        phase = wanted.phase;
        conditions = wanted.conditions;
        if (sameStatus(known, wanted)) return;
        const phaseChanged = known.phase !== wanted.phase;
        await coreActivities(
          localActivities,
          `status ${wanted.phase} gen ${wanted.observedGeneration} · ${ref.kind} ${where}`,
        ).writeStatus({
          ref,
          uid: objUid,
          status: wanted,
          ...(eventFor && phaseChanged
            ? {
                event: {
                  ...eventFor,
                  action: 'Reconcile',
                  dedupKey: `${wanted.observedGeneration}/${wanted.phase}/${passes + 1}`,
                },
              }
            : {}),
        });
        known = wanted;
        statusWritten = true;
      });
      statusChain = next.catch(() => undefined);
      await next;
    };

    const timerToCarry = (): { timer?: { kind: 'requeue' | 'drift'; at: number } } =>
      nextTimer && nextTimer.kind !== 'retry' ? { timer: { kind: nextTimer.kind, at: nextTimer.at } } : {};

    const armTimer = (kind: 'requeue' | 'drift' | 'retry', delay: number): void => {
      const at = Date.now() + delay;
      nextTimer = { kind, at };
      // A running timer that fires no later re-arms itself for the remainder when it fires.
      if ([...timerFireTimes].some((t) => t <= at)) return;
      startTimer(at);
    };
    const startTimer = (at: number): void => {
      timerFireTimes.add(at);
      void sleep(Math.max(1, at - Date.now()), { summary: 'requeue / drift check' }).then(() => {
        timerFireTimes.delete(at);
        if (!nextTimer || nextTimer.kind === 'retry') return;
        if (Date.now() >= nextTimer.at) timerDue = true;
        else if (![...timerFireTimes].some((t) => t <= nextTimer!.at)) startTimer(nextTimer.at);
      });
    };

    /** Runs one step (rounds of server-side attempts, then workflow backoff) until success or terminal. */
    const runStep = async (
      plan: ReconcilerPlan,
      step: StepPlan,
      stepInput: StepInput,
      generation: number,
      objUid: string,
    ): Promise<{
      state: StepState;
      terminal: boolean;
      refused?: boolean;
      superseded: boolean;
      result?: StepActivityResult;
    }> => {
      const retry = step.retry;
      const options: ActivityOptions = {
        startToCloseTimeout: step.startToCloseTimeout ?? '1 minute',
        ...(step.heartbeatTimeout !== undefined ? { heartbeatTimeout: step.heartbeatTimeout } : {}),
        retry: {
          initialInterval: retry?.initialInterval ?? '1 second',
          backoffCoefficient: retry?.backoffCoefficient ?? 2,
          maximumInterval: retry?.maximumInterval ?? '5 minutes',
          maximumAttempts: retry?.attemptsPerRound ?? 3,
          nonRetryableErrorTypes: [...terminalTypes, ...(retry?.nonRetryableErrorTypes ?? [])],
        },
        summary: `${step.summary ?? step.name} · ${ref.kind} ${where} gen ${generation}`,
      };
      const type = stepActivityType(plan, step.name);
      let attempts = 0;
      for (let round = 1; ; round++) {
        steps[step.name] = {
          status: round === 1 ? 'running' : 'retrying',
          attempts,
          ...(steps[step.name]?.message ? { message: steps[step.name]!.message! } : {}),
        };
        showDetails();
        try {
          const proxy =
            localActivities && step.execution === 'local'
              ? proxyLocalActivities(options as LocalActivityOptions)
              : proxyActivities(options);
          const act = proxy[type] as (i: StepInput) => Promise<StepActivityResult>;
          const result = await act(stepInput);
          attempts += result.attempt;
          const state: StepState = {
            status: 'succeeded',
            attempts,
            ...(result.message !== undefined ? { message: result.message } : {}),
            ...(result.requeueAfterMs !== undefined ? { requeueAfterMs: result.requeueAfterMs } : {}),
          };
          steps[step.name] = state;
          showDetails();
          return { state, terminal: false, superseded: false, result };
        } catch (err) {
          const failure = appFailure(err);
          const detail = (failure.details?.[0] ?? {}) as { attempt?: number; retryAfterMs?: number };
          attempts += detail.attempt ?? (options.retry?.maximumAttempts || 1);
          const message = failure.message ?? String(err);
          lastError = `${step.name}: ${message}`;
          const terminal =
            failure.nonRetryable === true ||
            terminalTypes.includes(failure.type ?? '') ||
            (retry?.nonRetryableErrorTypes ?? []).includes(failure.type ?? '');
          steps[step.name] = { status: terminal ? 'failed' : 'retrying', attempts, message };
          showDetails();
          if (terminal) {
            const refused = failure.type === adoptionRefusedType;
            return { state: steps[step.name]!, terminal: true, ...(refused ? { refused } : {}), superseded: false };
          }
          await writeStatusIfChanged(
            objUid,
            desiredStatus({ phase: 'Degraded', generation, failedStep: step.name, message }),
            { type: 'Warning', reason: 'StepFailed', note: `${step.name}: ${message}` },
          );
          upsertIfChanged();
          // Retry-After (429/503): the activity puts it in the details as well as in nextRetryDelay,
          // which only the server's own retries see.
          const retryAfter = typeof detail.retryAfterMs === 'number' ? detail.retryAfterMs : undefined;
          const delay = retryAfter ?? backoffMs(retry, round);
          nextTimer = { kind: 'retry', at: Date.now() + delay };
          showDetails();
          // A newer request ends the wait (and the pass); so does a history grown long enough for the
          // server to suggest continue-as-new, since a step can fail for days.
          const superseded = await condition(
            () => coalescer.supersedes(objUid, generation) || workflowInfo().continueAsNewSuggested,
            delay,
          );
          nextTimer = undefined;
          if (superseded) {
            if (!coalescer.peek()) {
              // Continue-as-new is coming: make sure the next run retries this generation.
              coalescer.offer({ ref, uid: objUid, generation, resourceVersion: '', reason: 'requeue' });
            }
            steps[step.name] = { status: 'failed', attempts, message: `superseded after: ${message}` };
            return { state: steps[step.name]!, terminal: false, superseded: true };
          }
        }
      }
    };

    /** Runs a list of steps in dependency order, independent ones in parallel. */
    const runSteps = async (
      plan: ReconcilerPlan,
      list: readonly StepPlan[],
      obs: Extract<Observation, { found: true }>,
    ): Promise<{
      failed?: { step: string; message: string; terminal: boolean; refused?: boolean };
      superseded: boolean;
      requeueAfterMs?: number;
    }> => {
      const status: Record<string, StepState['status']> = {};
      for (const s of list) status[s.name] = 'pending';
      stepList = list;
      steps = {};
      for (const s of list) steps[s.name] = { status: 'pending', attempts: 0 };
      showDetails();
      const outputs: Record<string, StepOutputs> = {};
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
        return {
          ref,
          identity: obs.identity,
          spec: obs.spec,
          ...(Object.keys(results).length > 0 ? { results } : {}),
        };
      };
      let failed: { step: string; message: string; terminal: boolean; refused?: boolean } | undefined;
      let superseded = false;
      let requeueAfterMs: number | undefined;
      const running = new Map<string, Promise<void>>();
      for (;;) {
        const { start, skip } = runnableSteps(list, status);
        for (const name of skip) {
          status[name] = 'skipped';
          steps[name] = { status: 'skipped', attempts: 0, message: 'a dependency failed' };
        }
        if (!failed && !superseded) {
          for (const name of start) {
            const step = list.find((s) => s.name === name)!;
            status[name] = 'running';
            running.set(
              name,
              runStep(plan, step, inputFor(step), obs.generation, obs.uid).then((r) => {
                running.delete(name);
                if (r.result?.outputs !== undefined) outputs[name] = r.result.outputs;
                status[name] = r.state.status === 'succeeded' ? 'succeeded' : 'failed';
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
              }),
            );
          }
        } else {
          for (const name of start) {
            status[name] = 'skipped';
            steps[name] = {
              status: 'skipped',
              attempts: 0,
              message: superseded ? 'superseded' : 'another step failed',
            };
          }
        }
        if (running.size === 0) break;
        await Promise.race(running.values());
      }
      showDetails();
      return {
        ...(failed ? { failed } : {}),
        superseded,
        ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}),
      };
    };

    const outcome = (result: PassResult, generation: number, extra: Partial<PassOutcome> = {}): PassOutcome => ({
      pass: passes + 1,
      result,
      phase,
      generation,
      ...(uid !== undefined ? { uid } : {}),
      steps: { ...steps },
      ...(lastError !== undefined && result !== 'ready' ? { error: lastError } : {}),
      statusWritten,
      ...extra,
    });

    /** One pass: observe, compare, act, report. */
    const runPass = async (): Promise<PassOutcome> => {
      statusWritten = false;
      detailsTitle = 'Steps';
      stepList = plan?.steps ?? [];
      let obs: Observation;
      try {
        obs = await coreActivities(localActivities, `observe ${ref.kind} ${where}`).observeObject({ ref });
      } catch (err) {
        const failure = appFailure(err);
        if (failure.type !== 'InvalidSpec') {
          lastError = `observe: ${failure.message ?? String(err)}`;
          return outcome('degraded', currentGeneration ?? 0);
        }
        const snapshot = (failure.details?.[0] as InvalidSpecDetails | undefined)?.data;
        if (!snapshot) throw err;
        if (uid !== snapshot.uid) uid = snapshot.uid;
        known = snapshot.status;
        currentGeneration = snapshot.generation;
        lastError = failure.message ?? 'invalid spec';
        blockedGeneration = snapshot.generation;
        blockedBy = 'invalid';
        steps = {};
        await writeStatusIfChanged(
          snapshot.uid,
          desiredStatus({ phase: 'Invalid', generation: snapshot.generation, message: lastError }),
          { type: 'Warning', reason: 'InvalidSpec', note: lastError },
        );
        observedGeneration = snapshot.generation;
        return outcome('invalid', snapshot.generation);
      }
      if (!obs.found) {
        log.info('object is gone; workflow completes', { ref });
        return outcome('gone', 0);
      }
      // Histories recorded before plans travelled with the observation have none: use the legacy plan.
      const observedPlan = obs.plan ?? legacyPlan;
      if (!observedPlan) throw new Error(`the observation of ${ref.kind} ${where} carries no plan`);
      plan = observedPlan;
      stepList = plan.steps;
      if (uid !== undefined && obs.uid !== uid) {
        // Same name, new UID: a new object. The old one is gone (its finalizer was removed): start over.
        log.info('object was recreated; starting over', { ref, oldUid: uid, uid: obs.uid });
        blockedGeneration = undefined;
        lastError = undefined;
      }
      uid = obs.uid;
      known = obs.status;
      currentGeneration = obs.generation;

      if (obs.deleting) {
        if (!obs.hasFinalizer) return outcome('deleted', obs.generation);
        detailsTitle = 'Cleanup';
        await writeStatusIfChanged(obs.uid, desiredStatus({ phase: 'Deleting', generation: obs.generation }));
        upsertIfChanged();
        const cleanup = await runSteps(observedPlan, observedPlan.cleanup ?? [], obs);
        if (cleanup.failed) {
          await writeStatusIfChanged(
            obs.uid,
            desiredStatus({
              phase: 'Deleting',
              generation: obs.generation,
              message: `cleanup failed: ${cleanup.failed.message}`,
            }),
          );
          return outcome('degraded', obs.generation);
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
        return outcome('deleted', obs.generation);
      }

      if (blockedGeneration !== undefined && obs.generation > blockedGeneration) blockedGeneration = undefined;
      const result = await runSteps(observedPlan, observedPlan.steps, obs);
      if (result.superseded) return outcome('superseded', obs.generation);
      if (result.failed?.refused) {
        // Adoption refused: nothing changed and backoff cannot help, but the conflict can go away
        // without any event homeostat watches (an unowned object deleted, a role dropped): look again
        // at the drift interval instead of blocking the generation.
        await writeStatusIfChanged(
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
        observedGeneration = obs.generation;
        blockedGeneration = undefined;
        return outcome('degraded', obs.generation, { requeueAfterMs: driftMs() ?? adoptionRecheckMs });
      }
      if (result.failed) {
        if (result.failed.terminal) {
          blockedGeneration = obs.generation;
          blockedBy = 'terminal';
        }
        await writeStatusIfChanged(
          obs.uid,
          desiredStatus({
            phase: 'Degraded',
            generation: obs.generation,
            failedStep: result.failed.step,
            message: result.failed.message,
            terminal: result.failed.terminal,
          }),
          {
            type: 'Warning',
            reason: result.failed.terminal ? 'TerminalStepError' : 'StepFailed',
            note: result.failed.message,
          },
        );
        observedGeneration = obs.generation;
        return outcome('degraded', obs.generation);
      }
      lastError = undefined;
      await writeStatusIfChanged(
        obs.uid,
        desiredStatus({
          phase: 'Ready',
          generation: obs.generation,
          succeeded: observedPlan.steps.length,
          // Per-step conditions came later: histories recorded before them keep the old status
          // (and so the old commands) on replay.
          ...(patched('status-step-conditions')
            ? {
                steps: observedPlan.steps.map((s) => ({
                  name: s.name,
                  ...(steps[s.name]?.message ? { message: steps[s.name]!.message! } : {}),
                })),
              }
            : {}),
        }),
        { type: 'Normal', reason: 'Reconciled', note: `generation ${obs.generation} reconciled` },
      );
      observedGeneration = obs.generation;
      return outcome(
        'ready',
        obs.generation,
        result.requeueAfterMs !== undefined ? { requeueAfterMs: result.requeueAfterMs } : {},
      );
    };

    const driftMs = (): number | undefined =>
      plan?.driftCheckInterval !== undefined ? durationMs(plan.driftCheckInterval, 0) : undefined;
    const maxPasses = (): number => plan?.maxPassesPerRun ?? defaultMaxPassesPerRun;
    // Metrics are not commands: emitting them leaves the history unchanged, and the SDK drops them
    // while replaying, so a pass is counted once however often its history is replayed.
    const meter = metricMeter.withTags({ group: ref.group || 'core', kind: ref.kind });
    const reconcileTotal = meter.createCounter(reconcileMetricNames.total, '', 'Reconcile passes, by result');
    const reconcileErrors = meter.createCounter(reconcileMetricNames.errors, '', 'Reconcile passes that failed');
    const reconcileTime = meter.createHistogram(
      reconcileMetricNames.time,
      'float',
      's',
      'Duration of reconcile passes',
    );
    if (carried?.timer) armTimer(carried.timer.kind, Math.max(0, carried.timer.at - Date.now()));
    showDetails();

    for (;;) {
      await condition(() => coalescer.peek() !== undefined || nowRequested || timerDue);
      const request = coalescer.take();
      const byUpdate = nowRequested;
      const byTimer = timerDue;
      nowRequested = false;
      timerDue = false;
      if (
        !byUpdate &&
        !byTimer &&
        request &&
        blockedGeneration !== undefined &&
        request.uid === uid &&
        request.generation <= blockedGeneration &&
        request.reason !== 'deleted' &&
        !(request.reason === 'referenced-changed' && blockedBy === 'terminal')
      ) {
        // Invalid spec or terminal failure: no retries until the spec changes.
        continue;
      }
      if (byTimer && blockedGeneration !== undefined && !request && !byUpdate) continue;

      reconciling = true;
      const timerKind = nextTimer?.kind;
      nextTimer = undefined;
      showDetails();
      let result: PassOutcome;
      const passStartedAt = Date.now();
      try {
        result = await runPass();
      } catch (err) {
        // A terminal activity failure outside the steps (e.g. a rejected status patch): report it and
        // wait for the next request; anything else is a bug and fails the workflow task.
        if ((err as { name?: string }).name !== 'ActivityFailure') throw err;
        lastError = appFailure(err).message ?? String(err);
        result = outcome('degraded', currentGeneration ?? 0);
      }
      reconciling = false;
      reconcileTotal.add(1, { result: result.result });
      // Adding 0 on success exports the series from the first pass on, as controller-runtime does.
      reconcileErrors.add(result.result === 'degraded' || result.result === 'invalid' ? 1 : 0);
      reconcileTime.record((Date.now() - passStartedAt) / 1000);
      passes += 1;
      passesThisRun += 1;
      lastOutcome = result;
      outcomes.set(result.pass, result);
      outcomes.delete(result.pass - 20);
      upsertIfChanged();
      log.info('pass finished', {
        ref,
        pass: result.pass,
        result: result.result,
        generation: result.generation,
        trigger: byUpdate ? 'update' : byTimer ? timerKind : request?.reason,
      });

      if (result.result === 'gone' || result.result === 'deleted') {
        showDetails();
        finished = true;
        await condition(allHandlersFinished);
        const next = coalescer.peek();
        if (next && next.uid !== uid && next.reason !== 'deleted') {
          // A new object with the same name was requested meanwhile: start over in a fresh run.
          return continueAsNew<ObjectWorkflow>({ ref, pending: next, carried: { passes, runs: run } });
        }
        return result;
      }

      if (blockedGeneration === undefined) {
        const requeue = result.requeueAfterMs;
        const drift = driftMs();
        if (requeue !== undefined && (drift === undefined || requeue < drift)) armTimer('requeue', requeue);
        else if (drift !== undefined) armTimer('drift', drift);
      }
      showDetails();

      if (passesThisRun >= maxPasses() || workflowInfo().continueAsNewSuggested) {
        await condition(() => allHandlersFinished() || nowRequested);
        if (nowRequested) continue; // an update waits for a pass: serve it first
        const pending = coalescer.take();
        log.info('continuing as new', { ref, passes, run, carriesRequest: pending !== undefined });
        return continueAsNew<ObjectWorkflow>({
          ref,
          ...(pending ? { pending } : {}),
          carried: {
            ...(uid !== undefined ? { uid } : {}),
            passes,
            runs: run,
            ...(blockedGeneration !== undefined ? { invalidGeneration: blockedGeneration, blockedBy } : {}),
            lastOutcome: result,
            ...timerToCarry(),
          },
        });
      }
    }
  };
}
