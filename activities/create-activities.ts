/**
 * The activities of the per-object workflow, built by {@link createActivities} from their clients:
 * observing the object (read, validate, add the finalizer if the plan has cleanup), writing status, removing the finalizer,
 * and one activity per reconciler step. Activities keep no state between calls and may run more than
 * once. Status writes merge conditions by type, keeping those of other controllers. Status goes to the status subresource of kinds homeostat defines and to annotations on kinds
 * it does not (a `Namespace`: see `statusAnnotations`); an object that no longer matches its
 * reconciler's label selector is released (finalizer and status annotations removed) and treated as
 * gone.
 */
import { Context } from '@temporalio/activity';
import type * as k8s from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type {
  Activities,
  LeadingStepOutcome,
  ObjectSnapshot,
  Observation,
  ObserveInput,
  StepActivityResult,
  StepInput,
  WriteStatusInput,
  WriteStatusResult,
} from '../core/activity-contract';
import type { ConditionSpec, ObjectRef, ObjectStatus, Phase, StatusFields } from '../core/definitions';
import { matchesLabels, parseLabelSelector, type LabelRequirement } from '../core/label-selector';
import { assertOperator, reconcilerFor as findReconciler, type Operator } from '../core/operator';
import {
  defaultStepTimeout,
  driftCheckAnnotation,
  driftIntervalMs,
  durationMs,
  leadingLocalSteps,
  stepActivityType,
  type ReconcilerPlan,
} from '../core/plan';
import type { Reconciler, StepOutputs, StepResult } from '../core/reconciler';
import {
  phaseChangeEvent,
  reservedStatusFields,
  sameStatus,
  statusFieldName,
  succeededPassStatus,
} from '../core/status';
import { shareConnections } from '../core/kube-connections';
import { HomeostatError, isConflict, isNotFound, toApplicationFailure } from '../core/errors';
import {
  childClient,
  defaultFieldManager,
  readObject,
  finalizerName,
  identityOf,
  PrimaryObjects,
  recordEvent,
  statusAnnotations,
  statusLocationOf,
  type CustomObject,
  type StatusLocation,
} from './kubernetes';

/** What {@link createActivities} needs. */
export interface ActivityDeps {
  readonly kc: k8s.KubeConfig;
  /** The operator whose reconcilers' steps become activities (checked: every planned step implemented). */
  readonly operator: Operator;
  readonly logger: Logger;
  /** @default 'homeostat' */
  readonly fieldManager?: string;
  /** `reportingInstance` of Events. @default 'homeostat-worker' */
  readonly reportingInstance?: string;
  /** Retries of a status or finalizer patch that lost a resourceVersion race (409). @default 5 */
  readonly conflictRetries?: number;
}

/** The status homeostat wrote into annotations (kinds it does not define), in the shape of `status`. */
function annotatedStatus(obj: CustomObject): Record<string, unknown> {
  const a = obj.metadata.annotations ?? {};
  const generation = Number(a[statusAnnotations.observedGeneration]);
  let conditions: unknown;
  try {
    conditions = JSON.parse(a[statusAnnotations.conditions] ?? 'null');
  } catch {
    conditions = undefined; // edited by hand into something else: rewritten on the next status write
  }
  return {
    ...(Number.isInteger(generation) && a[statusAnnotations.observedGeneration] !== undefined
      ? { observedGeneration: generation }
      : {}),
    ...(a[statusAnnotations.phase] !== undefined ? { phase: a[statusAnnotations.phase] } : {}),
    ...(Array.isArray(conditions) ? { conditions } : {}),
  };
}

/** The status fields homeostat owns, as read (from `status` or from annotations), without transition times. */
export function ownedStatus(obj: CustomObject, location: StatusLocation = 'subresource'): ObjectStatus {
  const status = location === 'annotations' ? annotatedStatus(obj) : (obj.status ?? {});
  const conditions = Array.isArray(status.conditions) ? (status.conditions as Record<string, unknown>[]) : undefined;
  return {
    ...(typeof status.observedGeneration === 'number' ? { observedGeneration: status.observedGeneration } : {}),
    ...(typeof status.phase === 'string' ? { phase: status.phase as Phase } : {}),
    ...(conditions
      ? {
          conditions: conditions.map((c) => ({
            type: String(c.type),
            status: c.status as ConditionSpec['status'],
            reason: typeof c.reason === 'string' ? c.reason : '',
            message: typeof c.message === 'string' ? c.message : '',
            ...(typeof c.observedGeneration === 'number' ? { observedGeneration: c.observedGeneration } : {}),
          })),
        }
      : {}),
    ...(location === 'subresource' ? fieldsOf(status) : {}),
  };
}

/** The reconciler's own status fields of a status: its top-level plain values other than homeostat's. */
function fieldsOf(status: Record<string, unknown>): { fields?: StatusFields } {
  const fields: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(status)) {
    if (reservedStatusFields.has(key)) continue;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') fields[key] = value;
  }
  return Object.keys(fields).length > 0 ? { fields } : {};
}

/** The condition types homeostat always reports (`desiredStatus` in workflows/object-state.ts). */
export const homeostatConditionTypes = ['Ready', 'Progressing', 'Degraded'] as const;

/**
 * The condition type of one step, `connection-secret` → `ConnectionSecretReady`: the same rule as
 * `stepConditionType` in workflows/object-state.ts, which this folder may not import (a unit test
 * checks that the two agree).
 */
export function stepConditionTypeOf(step: string): string {
  return `${step
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('')}Ready`;
}

/**
 * The condition types homeostat owns on an object of `plan`: `Ready`, `Progressing`, `Degraded`, one
 * `<Step>Ready` per step and cleanup step, and whatever it is writing now. Every other condition
 * belongs to another controller (or a person) and is kept as it is by status writes.
 */
export function ownedConditionTypes(
  plan: Pick<ReconcilerPlan, 'steps' | 'cleanup'>,
  writing: ObjectStatus,
): Set<string> {
  return new Set<string>([
    ...homeostatConditionTypes,
    ...[...plan.steps, ...(plan.cleanup ?? [])].map((s) => stepConditionTypeOf(s.name)),
    ...(writing.conditions ?? []).map((c) => c.type),
  ]);
}

/** `status` with only the conditions of `owned` types: what a status write compares with what it writes. */
function onlyOwned(status: ObjectStatus, owned: ReadonlySet<string>): ObjectStatus {
  return status.conditions ? { ...status, conditions: status.conditions.filter((c) => owned.has(c.type)) } : status;
}

function snapshotOf(obj: CustomObject, location: StatusLocation): ObjectSnapshot {
  return {
    uid: obj.metadata.uid ?? '',
    generation: obj.metadata.generation ?? 0,
    resourceVersion: obj.metadata.resourceVersion ?? '',
    deleting: obj.metadata.deletionTimestamp != null,
    hasFinalizer: (obj.metadata.finalizers ?? []).includes(finalizerName),
    status: ownedStatus(obj, location),
    identity: identityOf(obj),
  };
}

/** The largest `outputs` a step may return, as JSON. */
export const maxStepOutputsBytes = 4096;

/** A step's result as the workflow gets it: durations in milliseconds, outputs checked for size. */
function stepActivityResult(kind: string, step: string, result: StepResult, attempt: number): StepActivityResult {
  const { requeueAfter, requeueAfterMs, outputs, message, progressing, status } = result;
  const requeue = requeueAfter !== undefined ? durationMs(requeueAfter, 0) : requeueAfterMs;
  if (outputs !== undefined) {
    const size = Buffer.byteLength(JSON.stringify(outputs));
    if (size > maxStepOutputsBytes) {
      throw new HomeostatError(
        'ERR_STEP_TERMINAL',
        `${kind} step ${step} returned ${size} bytes of outputs; at most ${maxStepOutputsBytes} are allowed (they are recorded in history)`,
      );
    }
  }
  if (progressing !== undefined && (typeof progressing !== 'string' || progressing.length > maxProgressingLength)) {
    throw new HomeostatError(
      'ERR_STEP_TERMINAL',
      `${kind} step ${step} returned a progressing message that is not a string of at most ${maxProgressingLength} characters`,
    );
  }
  if (status !== undefined) {
    const problem = statusFieldsProblem(status);
    if (problem)
      throw new HomeostatError('ERR_STEP_TERMINAL', `${kind} step ${step} returned status fields: ${problem}`);
  }
  return {
    attempt,
    ...(message !== undefined ? { message } : {}),
    ...(requeue !== undefined ? { requeueAfterMs: requeue } : {}),
    ...(outputs !== undefined ? { outputs: outputs } : {}),
    ...(progressing !== undefined ? { progressing } : {}),
    ...(status !== undefined && Object.keys(status).length > 0 ? { status } : {}),
  };
}

/** The longest `progressing` message a step may return. */
export const maxProgressingLength = 1024;

/**
 * What is wrong with a step's status fields, if anything: each a lowerCamelCase name that is not
 * homeostat's own, with a plain value (string, finite number, boolean), at most 4 KiB in all.
 */
export function statusFieldsProblem(fields: unknown): string | undefined {
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) return 'not an object of plain values';
  for (const [key, value] of Object.entries(fields)) {
    if (reservedStatusFields.has(key)) return `${key} is homeostat's own field`;
    if (!statusFieldName.test(key)) return `${JSON.stringify(key.slice(0, 80))} is not a lowerCamelCase field name`;
    const plain =
      typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
    if (!plain) return `${key} is not a string, finite number or boolean`;
  }
  const size = Buffer.byteLength(JSON.stringify(fields));
  if (size > maxStepOutputsBytes) return `${size} bytes; at most ${maxStepOutputsBytes} are allowed`;
  return undefined;
}

/** Formats zod issues as one readable line: `spec.replicas: Too small: expected number to be >=0`. */
function formatIssues(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  return issues.map((i) => `${['spec', ...i.path.map(String)].join('.')}: ${i.message}`).join('; ');
}

/**
 * Builds the activities for a set of reconcilers. Every error leaves as an `ApplicationFailure` whose
 * type and retryability come from the error catalog.
 */
export function createActivities(deps: ActivityDeps): Activities & Record<string, (input: never) => Promise<unknown>> {
  // Every pass makes several short requests: reuse connections instead of a TLS handshake each.
  shareConnections(deps.kc);
  const primary = new PrimaryObjects(deps.kc);
  const fieldManager = deps.fieldManager ?? defaultFieldManager;
  const conflictRetries = deps.conflictRetries ?? 5;
  const reporting = { controller: 'homeostat.dev/homeostat', instance: deps.reportingInstance ?? 'homeostat-worker' };
  assertOperator(deps.operator);
  const reconcilers = deps.operator.reconcilers as readonly Reconciler<unknown>[];
  const log = deps.logger.child({ component: 'activities' });

  const reconcilerFor = (ref: ObjectRef): Reconciler<unknown> => {
    const r = findReconciler(deps.operator, ref);
    if (!r) throw new HomeostatError('ERR_UNKNOWN_KIND', `no reconciler for ${ref.kind}.${ref.group}`);
    return r;
  };
  // Parsed once: a selector that does not parse fails the worker's start, not a pass.
  const selectors = new Map<Reconciler<unknown>, LabelRequirement[]>();
  for (const r of reconcilers) if (r.labelSelector) selectors.set(r, parseLabelSelector(r.labelSelector));

  /** Runs fn; maps anything thrown to an ApplicationFailure. */
  const guarded =
    <I, O>(fn: (input: I) => Promise<O>) =>
    async (input: I): Promise<O> => {
      try {
        return await fn(input);
      } catch (err) {
        throw toApplicationFailure(err);
      }
    };

  /** Patches metadata.finalizers with a resourceVersion precondition, re-reading on 409. */
  const patchFinalizers = async (
    plan: ReconcilerPlan,
    ref: ObjectRef,
    uid: string,
    start: CustomObject | undefined,
    change: (finalizers: string[]) => string[] | undefined,
  ): Promise<CustomObject | undefined> => {
    let obj = start ?? (await primary.get(plan, ref));
    for (let i = 0; ; i++) {
      if (!obj || obj.metadata.uid !== uid) return obj;
      const next = change(obj.metadata.finalizers ?? []);
      if (!next) return obj;
      try {
        return await primary.patch(plan, ref, {
          metadata: { resourceVersion: obj.metadata.resourceVersion, finalizers: next },
        });
      } catch (err) {
        if (!isConflict(err) || i >= conflictRetries) throw err;
        obj = await primary.get(plan, ref);
      }
    }
  };

  /**
   * Lets go of an object its reconciler no longer selects: removes homeostat's finalizer and status
   * annotations (with a resourceVersion precondition, re-read on 409). Cleanup steps do not run: the
   * object is not being deleted, only no longer homeostat's.
   */
  const release = async (
    plan: ReconcilerPlan,
    ref: ObjectRef,
    start: CustomObject,
    location: StatusLocation,
  ): Promise<void> => {
    let obj: CustomObject | undefined = start;
    for (let i = 0; obj; i++) {
      const finalizers = obj.metadata.finalizers ?? [];
      const annotations = obj.metadata.annotations ?? {};
      const stale = location === 'annotations' ? Object.values(statusAnnotations).filter((k) => k in annotations) : [];
      if (!finalizers.includes(finalizerName) && stale.length === 0) return;
      try {
        await primary.patch(plan, ref, {
          metadata: {
            resourceVersion: obj.metadata.resourceVersion,
            finalizers: finalizers.filter((f) => f !== finalizerName),
            ...(stale.length > 0 ? { annotations: Object.fromEntries(stale.map((k) => [k, null])) } : {}),
          },
        });
        log.info({ ref, uid: obj.metadata.uid }, 'no longer selected by the label selector: released');
        return;
      } catch (err) {
        if (!isConflict(err) || i >= conflictRetries) throw err;
        obj = await primary.get(plan, ref);
      }
    }
  };

  /**
   * Writes status as the `writeStatus` activity does (merge by condition type, resourceVersion
   * precondition, re-read on 409, the Event after the write). `start`: the object as just read, so
   * the first attempt needs no read of its own. Returns the object as written.
   */
  const writeOwnStatus = async (
    input: WriteStatusInput,
    start?: CustomObject,
  ): Promise<{ written: true; object: CustomObject } | { written: false; reason: 'unchanged' | 'gone' }> => {
    const reconciler = reconcilerFor(input.ref);
    const { plan } = reconciler;
    const location = statusLocationOf(reconciler);
    const owned = ownedConditionTypes(plan, input.status);
    // Observed with no status at all (a new object): nothing to merge, so the first write needs no
    // read. The resourceVersion precondition keeps it safe; a 409 (changed meanwhile, or another
    // object of that name) falls back to read, merge, write.
    let unread = input.expectedVersion || undefined;
    let read = start;
    for (let i = 0; ; i++) {
      const obj = unread ? undefined : (read ?? (await primary.get(plan, input.ref)));
      read = undefined;
      if (!unread) {
        if (!obj || obj.metadata.uid !== input.uid) return { written: false, reason: 'gone' };
        if (sameStatus(onlyOwned(ownedStatus(obj, location), owned), input.status)) {
          return { written: false, reason: 'unchanged' };
        }
      }
      const resourceVersion = unread ?? obj?.metadata.resourceVersion;
      const before = !obj ? {} : location === 'annotations' ? annotatedStatus(obj) : (obj.status ?? {});
      const existing = Array.isArray(before.conditions)
        ? (before.conditions as { type?: string; status?: string; lastTransitionTime?: string }[])
        : [];
      const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
      // Merged by type: homeostat's conditions replaced, every other controller's kept as read
      // (after homeostat's, in their order). The resourceVersion precondition below makes the merge safe: a
      // condition written meanwhile is a 409, and the merge is redone on what is there then.
      const ours = input.status.conditions.map((c) => {
        const previous = existing.find((e) => e.type === c.type);
        return {
          ...c,
          lastTransitionTime:
            previous?.status === c.status && previous.lastTransitionTime ? previous.lastTransitionTime : now,
        };
      });
      const foreign = existing.filter((e) => typeof e.type === 'string' && !owned.has(e.type));
      const conditions = [...ours, ...foreign];
      const { observedGeneration, phase, fields } = input.status;
      let written: CustomObject;
      try {
        if (location === 'annotations') {
          written = await primary.patch(plan, input.ref, {
            metadata: {
              resourceVersion,
              annotations: {
                [statusAnnotations.phase]: phase,
                [statusAnnotations.observedGeneration]: String(observedGeneration),
                [statusAnnotations.conditions]: JSON.stringify(conditions),
              },
            },
          });
        } else {
          written = await primary.patch(
            plan,
            input.ref,
            {
              metadata: { resourceVersion },
              status: { observedGeneration, phase, conditions, ...fields },
            },
            'status',
          );
        }
      } catch (err) {
        if (unread && (isConflict(err) || isNotFound(err))) {
          log.debug({ ref: input.ref }, 'status changed since observed, re-reading');
          unread = undefined;
          i--; // the unread attempt is not one of the conflict retries
          continue;
        }
        if (isConflict(err) && i < conflictRetries) {
          log.debug({ ref: input.ref, attempt: i }, 'status conflict, re-reading');
          continue;
        }
        throw err;
      }
      if (input.event) await recordEvent(deps.kc, identityOf(written), input.event, reporting);
      return { written: true, object: written };
    }
  };

  /**
   * Observe's status write for a pass whose every step it ran and that all succeeded: the status the
   * workflow would write at the end of that pass (`succeededPassStatus`), with its Event when the phase
   * changes, unless the object already shows it. Returns the object as written, or nothing when
   * nothing was written; a failed write is left to the workflow's own status write.
   */
  const writePassStatus = async (
    plan: ReconcilerPlan,
    ref: ObjectRef,
    obj: CustomObject,
    snapshot: ObjectSnapshot,
    leading: readonly LeadingStepOutcome[],
    pass: number,
  ): Promise<CustomObject | undefined> => {
    const results = plan.steps.map((step) => {
      const outcome = leading.find((o) => o.step === step.name);
      return outcome && 'result' in outcome ? outcome.result : undefined;
    });
    if (results.some((r) => r === undefined)) return undefined;
    const done = results as StepActivityResult[];
    const fields = Object.assign({}, ...done.map((r) => r.status ?? {})) as StatusFields;
    const passed = succeededPassStatus(
      snapshot.generation,
      plan.steps.map((step, i) => ({
        name: step.name,
        ...(done[i]!.message ? { message: done[i]!.message } : {}),
        ...(done[i]!.progressing !== undefined ? { progressing: done[i]!.progressing } : {}),
      })),
      fields,
    );
    const event = phaseChangeEvent(snapshot.status.phase, passed.status, passed.event, pass);
    try {
      // Unchanged status is not written: writeOwnStatus compares it with `obj` before any request.
      const outcome = await writeOwnStatus(
        { ref, uid: snapshot.uid, status: passed.status, ...(event ? { event } : {}) },
        obj,
      );
      return outcome.written ? outcome.object : undefined;
    } catch (err) {
      log.warn(
        { ref, err: (err as Error).message },
        'status write with the observation failed; the workflow writes it',
      );
      return undefined;
    }
  };

  const activities: Activities = {
    observeObject: guarded(async (input: ObserveInput): Promise<Observation> => {
      const { ref } = input;
      const reconciler = reconcilerFor(ref);
      const { plan, schema } = reconciler;
      const location = statusLocationOf(reconciler);
      let obj = await primary.get(plan, ref);
      if (!obj) return { found: false };
      const selector = selectors.get(reconciler);
      if (selector && !matchesLabels(selector, obj.metadata.labels)) {
        // No longer selected (its label was removed): homeostat lets go of it, as if it were gone.
        await release(plan, ref, obj, location);
        return { found: false };
      }
      const parsed = schema.safeParse(obj.spec ?? {});
      if (obj.metadata.deletionTimestamp != null) {
        return { found: true, ...snapshotOf(obj, location), spec: parsed.success ? parsed.data : obj.spec, plan };
      }
      if (!parsed.success) {
        throw new HomeostatError('ERR_INVALID_SPEC', `invalid spec: ${formatIssues(parsed.error.issues)}`, {
          details: snapshotOf(obj, location),
        });
      }
      // The finalizer holds deletion for the cleanup steps, so only a plan with cleanup gets one; one
      // left by an older homeostat (which added it to every object) on a plan without cleanup goes.
      const wantsFinalizer = (plan.cleanup?.length ?? 0) > 0;
      if ((obj.metadata.finalizers ?? []).includes(finalizerName) !== wantsFinalizer) {
        obj = await patchFinalizers(plan, ref, obj.metadata.uid ?? '', obj, (f) => {
          if (f.includes(finalizerName) === wantsFinalizer) return undefined;
          return wantsFinalizer ? [...f, finalizerName] : f.filter((x) => x !== finalizerName);
        });
        if (!obj) return { found: false };
        log.info({ ref, uid: obj.metadata.uid }, wantsFinalizer ? 'finalizer added' : 'finalizer removed: no cleanup');
      }
      // The object's own drift-check interval, only when it asks for one (the observation is history).
      const asked = obj.metadata.annotations?.[driftCheckAnnotation];
      const drift = asked === undefined ? {} : driftIntervalMs(plan, asked);
      if (drift.problem) log.warn({ ref, problem: drift.problem }, 'drift-check annotation ignored');
      const snapshot = snapshotOf(obj, location);
      const leading = input.leadingSteps
        ? await runLeadingSteps(
            reconciler,
            { ref, identity: snapshot.identity, spec: parsed.data },
            input.leadingSteps.budgetMs,
          )
        : [];
      const pass = input.leadingSteps?.status?.pass;
      const written = pass !== undefined ? await writePassStatus(plan, ref, obj, snapshot, leading, pass) : undefined;
      return {
        found: true,
        ...(written ? snapshotOf(written, location) : snapshot),
        ...(written ? { statusWritten: true } : {}),
        ...(asked !== undefined && drift.ms !== undefined ? { driftCheckIntervalMs: drift.ms } : {}),
        spec: parsed.data,
        plan,
        ...(leading.length > 0 ? { leading } : {}),
      };
    }),

    writeStatus: guarded(async (input: WriteStatusInput): Promise<WriteStatusResult> => {
      const r = await writeOwnStatus(input);
      return r.written ? { written: true } : { written: false, reason: r.reason };
    }),

    removeFinalizer: guarded(async ({ ref, uid, event }) => {
      const { plan } = reconcilerFor(ref);
      const before = await primary.get(plan, ref);
      if (before && event && before.metadata.uid === uid) {
        await recordEvent(deps.kc, identityOf(before), event, reporting);
      }
      await patchFinalizers(plan, ref, uid, before, (f) =>
        f.includes(finalizerName) ? f.filter((x) => x !== finalizerName) : undefined,
      );
    }),
  };

  /**
   * Runs one attempt of a step's implementation: its context built from `input`, its result checked
   * (`stepActivityResult`). Throws what the step throws.
   */
  const invokeStep = async (
    reconciler: Reconciler<unknown>,
    name: string,
    input: StepInput,
    attempt: number,
    signal: AbortSignal,
    heartbeat: (details?: unknown) => void,
  ): Promise<StepActivityResult> => {
    const impl = reconciler.steps[name];
    if (!impl) throw new HomeostatError('ERR_UNKNOWN_KIND', `${reconciler.plan.kind} has no step ${name}`);
    const result = await impl({
      ref: input.ref,
      object: input.identity,
      spec: input.spec,
      step: name,
      attempt,
      children: childClient(deps.kc, input.identity, fieldManager),
      heartbeat,
      signal,
      log: log.child({ ref: input.ref, step: name, attempt }),
      results: input.results ?? {},
      read: (object) => readObject(deps.kc, input.identity, object),
    });
    return stepActivityResult(reconciler.plan.kind, name, result ?? {}, attempt);
  };

  /**
   * Observe's part of a pass's leading local steps ({@link ObserveInput.leadingSteps}): the first
   * attempt of each, in order, each within its own start-to-close timeout (then aborted through its
   * signal), stopping at the first that fails. A failure is returned as data, not thrown: the
   * observation stands, and the workflow retries the step as it retries any step.
   */
  const runLeadingSteps = async (
    reconciler: Reconciler<unknown>,
    base: Omit<StepInput, 'results'>,
    budgetMs: number,
  ): Promise<LeadingStepOutcome[]> => {
    const ctx = Context.current();
    const outcomes: LeadingStepOutcome[] = [];
    const outputs: Record<string, StepOutputs> = {};
    for (const step of leadingLocalSteps(reconciler.plan.steps, budgetMs)) {
      const input: StepInput = { ...base, ...(Object.keys(outputs).length > 0 ? { results: { ...outputs } } : {}) };
      const timeoutMs = durationMs(step.startToCloseTimeout ?? defaultStepTimeout, 0);
      const abort = new AbortController();
      const onCancel = (): void => abort.abort(ctx.cancellationSignal.reason);
      ctx.cancellationSignal.addEventListener('abort', onCancel, { once: true });
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const err = new HomeostatError(
            'ERR_STEP_FAILED',
            `step ${step.name} did not finish within its start-to-close timeout (${timeoutMs} ms)`,
          );
          abort.abort(err);
          reject(err);
        }, timeoutMs);
      });
      try {
        const result = await Promise.race([
          invokeStep(reconciler, step.name, input, 1, abort.signal, () => {}),
          timedOut,
        ]);
        outcomes.push({ step: step.name, result });
        if (result.outputs !== undefined) outputs[step.name] = result.outputs;
      } catch (err) {
        if (ctx.cancellationSignal.aborted) throw err;
        const failure = toApplicationFailure(err, { attempt: 1 });
        outcomes.push({
          step: step.name,
          failure: {
            message: failure.message,
            ...(failure.type ? { type: failure.type } : {}),
            nonRetryable: failure.nonRetryable === true,
            ...(failure.details ? { details: failure.details } : {}),
          },
        });
        break;
      } finally {
        clearTimeout(timer);
        ctx.cancellationSignal.removeEventListener('abort', onCancel);
      }
    }
    return outcomes;
  };

  const steps: Record<string, (input: StepInput) => Promise<StepActivityResult>> = {};
  for (const reconciler of reconcilers) {
    for (const name of Object.keys(reconciler.steps)) {
      steps[stepActivityType(reconciler.plan, name)] = async (input: StepInput): Promise<StepActivityResult> => {
        const ctx = Context.current();
        const attempt = ctx.info.attempt;
        const keepAlive = keepAliveHeartbeats(ctx);
        try {
          // A local step has no heartbeat to send (the workflow task's own heartbeat covers it).
          return await invokeStep(reconciler, name, input, attempt, ctx.cancellationSignal, (details?: unknown) =>
            keepAlive.heartbeat(details),
          );
        } catch (err) {
          throw toApplicationFailure(err, { attempt });
        } finally {
          keepAlive.stop();
        }
      };
    }
  }
  return { ...steps, ...activities };
}

/**
 * Heartbeats for a regular step with a heartbeat timeout every third of that timeout, repeating the
 * details the step last gave (so its checkpoint survives), whether or not the step heartbeats itself:
 * a worker that dies mid-step is noticed after the heartbeat timeout instead of the start-to-close
 * timeout, and the step moves to another worker. The first beat comes only after a third of the
 * timeout, so a short step sends none (each heartbeat that reaches the server is a billable action;
 * the SDK also throttles them to one per 80% of the timeout). A local step has no heartbeat: the
 * workflow task's own keeps it alive.
 */
function keepAliveHeartbeats(ctx: Context): { heartbeat(details?: unknown): void; stop(): void } {
  const timeoutMs = ctx.info.isLocal ? undefined : ctx.info.heartbeatTimeoutMs;
  let last: unknown = ctx.info.heartbeatDetails;
  const interval =
    timeoutMs !== undefined && timeoutMs > 0
      ? setInterval(() => ctx.heartbeat(last), Math.max(100, Math.floor(timeoutMs / 3)))
      : undefined;
  interval?.unref();
  return {
    heartbeat: (details?: unknown) => {
      if (ctx.info.isLocal) return;
      last = details;
      ctx.heartbeat(details);
    },
    stop: () => clearInterval(interval),
  };
}
