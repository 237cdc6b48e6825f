/**
 * A reconciler's step plan: plain, deterministic data that the per-object workflow imports to decide
 * which activities to run, in which order, with which retries and timeouts. This file must stay free
 * of imports with side effects (no zod, no Kubernetes client): it is bundled into workflow code.
 */

/**
 * A duration: milliseconds, or a string such as `'500 milliseconds'`, `'2 seconds'`, `'5m'`, `'1h'`
 * (the subset of Temporal's `ms` format that {@link parseDuration} reads: no weeks or years).
 */
export type Duration = number | string;

/** Retry behaviour of one step. */
export interface StepRetry {
  /**
   * Delay before the second attempt; later delays grow by {@link backoffCoefficient}.
   * @default '1 second'
   */
  readonly initialInterval?: Duration;
  /** @default 2 */
  readonly backoffCoefficient?: number;
  /** @default '5 minutes' */
  readonly maximumInterval?: Duration;
  /**
   * Attempts made by the Temporal server (no history cost) before the workflow sees the failure,
   * reports phase `Degraded`, waits its own growing backoff and starts another round.
   * @default 3
   */
  readonly attemptsPerRound?: number;
  /** Error types that are never retried (besides non-retryable failures and `InvalidSpec`). */
  readonly nonRetryableErrorTypes?: readonly string[];
}

/**
 * The heartbeat timeout of a regular step that sets none: a worker SIGKILLed under the step is noticed
 * within this, not at the step's start-to-close timeout.
 */
export const defaultStepHeartbeatTimeout: Duration = '5 seconds';

/** One step of a plan, run as one activity. */
export interface StepPlan<Name extends string = string> {
  /** Unique within the plan (steps and cleanup steps share one name space). */
  readonly name: Name;
  /** Steps that must succeed first; steps without a path between them run in parallel. */
  readonly dependsOn?: readonly Name[];
  /** What the step does, shown as the activity summary in the Temporal UI. */
  readonly summary?: string;
  /** @default '1 minute' */
  readonly startToCloseTimeout?: Duration;
  /**
   * How soon a worker that died under a regular step is noticed, so the step moves to another worker.
   * The worker heartbeats for the step every third of it (repeating the step's own heartbeat details),
   * so a step need not heartbeat itself unless it keeps a checkpoint. Not for local steps.
   * @default '5 seconds' for regular steps ({@link defaultStepHeartbeatTimeout})
   */
  readonly heartbeatTimeout?: Duration;
  readonly retry?: StepRetry;
  /**
   * How the step runs. `'local'`: as a local activity, in the worker that runs the workflow task,
   * without a round trip through the task queue; every local step of one workflow task costs one
   * Temporal action together. For short, idempotent steps (Kubernetes applies, quick SQL) that finish
   * well inside the workflow task timeout (10 s) and do not heartbeat. `'regular'`: an ordinary
   * activity, for long, heartbeating or rate-limited steps, or steps that must run on another worker.
   * A plan that starts with a chain of local steps ({@link leadingLocalSteps}) has observe run that
   * chain in its own local activity, and write the pass's status too when the chain is the whole plan.
   * @default 'regular'
   */
  readonly execution?: 'local' | 'regular';
  /**
   * The step runs only once approved (`POST …/approve`): set by `defineReconciler` from the step's
   * approval rule (`core/approval.ts`), never written by hand. Before the step the pass checks the rule
   * against the step's preview; when it asks for approval the pass waits for a decision, at most
   * `timeout`, then ends `Degraded` with nothing done.
   */
  readonly approval?: {
    /** @default '7 days' (`defaultApprovalTimeout`) */
    readonly timeout?: Duration;
  };
}

/**
 * A kind of child a reconciler owns. The informer bridge maps a child's changes to its owner's
 * workflow (reason `child-changed`): its spec (generation), deletion and owner references always;
 * its `status` too when {@link OwnedKind.statusChanges} is set.
 */
export interface OwnedKind {
  readonly apiVersion: string;
  readonly kind: string;
  /**
   * A change of the child's `status` re-reconciles the owner as well (a Deployment's rollout: its
   * ready replicas, its `Progressing` condition), so a step can report progress the child's own
   * controller makes. The bridge then watches these children whole (still only the ones homeostat
   * labelled) and keeps only their metadata and status. Without it, children are watched as metadata
   * only and their status never triggers a pass (controller-runtime's `Owns` triggers on every change).
   * @default false
   */
  readonly statusChanges?: boolean;
}

/** A reconciler's resource and its plan: everything the workflow needs, as plain data. */
export interface ReconcilerPlan<Name extends string = string> {
  /** API group of the reconciled resource (a CRD's group). */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly scope: 'Namespaced' | 'Cluster';
  /** Kinds of the children it owns (ownerReferences point back to the object). */
  readonly owns?: readonly OwnedKind[];
  /** The reconcile steps. */
  readonly steps: readonly StepPlan<Name>[];
  /**
   * Steps run when the object is being deleted, before the finalizer is removed. Only a plan with
   * cleanup steps puts homeostat's finalizer on its objects.
   */
  readonly cleanup?: readonly StepPlan<Name>[];
  /** A pass re-runs after this long without any event (drift detection); unset disables it. */
  readonly driftCheckInterval?: Duration;
  /**
   * The range an object may choose its own drift-check interval in, with the annotation
   * `homeostat.dev/drift-check-interval` (values outside are clamped to it).
   * @default { min: '30 seconds', max: '24 hours' }
   */
  readonly driftCheckBounds?: { readonly min?: Duration; readonly max?: Duration };
  /**
   * Passes per workflow run before continue-as-new (the server's `continueAsNewSuggested` can end a
   * run earlier).
   * @default 500
   */
  readonly maxPassesPerRun?: number;
}

/** Thrown by {@link definePlan} for a malformed plan. */
export class PlanError extends Error {
  override readonly name = 'PlanError';
}

/**
 * Checks a plan (unique names, known dependencies, no cycles, dependencies only within the same list,
 * every duration one homeostat can run ({@link parseDuration}), retry numbers Temporal accepts) and
 * returns it unchanged, with its step names as a literal type. A {@link PlanError} names the step and
 * the field: `step "announce": retry.initialInterval "1w" is not a duration homeostat can run (…)`.
 */
export function definePlan<const Name extends string, const P extends ReconcilerPlan<Name>>(plan: P): P {
  const all = [...plan.steps, ...(plan.cleanup ?? [])];
  const seen = new Set<string>();
  for (const step of all) {
    if (!/^[a-z][a-z0-9-]*$/.test(step.name)) throw new PlanError(`step name ${step.name} is not kebab-case`);
    if (seen.has(step.name)) throw new PlanError(`step ${step.name} is defined twice`);
    if (step.execution === 'local' && step.heartbeatTimeout !== undefined) {
      throw new PlanError(`step ${step.name} is local: a local activity cannot heartbeat (drop heartbeatTimeout)`);
    }
    seen.add(step.name);
  }
  for (const list of [plan.steps, plan.cleanup ?? []]) {
    const names = new Set(list.map((s) => s.name));
    for (const step of list) {
      for (const dep of step.dependsOn ?? []) {
        if (!names.has(dep)) throw new PlanError(`step ${step.name} depends on unknown step ${dep}`);
      }
    }
    executionLayers(list); // throws on cycles
  }
  const problems = timingProblems(plan);
  if (problems.length > 0) throw new PlanError(problems.join('; '));
  return plan;
}

/** The annotation an object sets to choose its own drift-check interval, within its plan's bounds. */
export const driftCheckAnnotation = 'homeostat.dev/drift-check-interval';

/**
 * An object's drift-check interval in milliseconds: the value of its {@link driftCheckAnnotation},
 * clamped to the plan's {@link ReconcilerPlan.driftCheckBounds}, or the plan's own interval when the
 * annotation is absent or not a duration (`problem` says why it was ignored). `undefined` when the
 * plan has no drift check: an annotation cannot turn on what the plan's author left off.
 */
export function driftIntervalMs(
  plan: Pick<ReconcilerPlan, 'driftCheckInterval' | 'driftCheckBounds'>,
  annotation: string | undefined,
): { readonly ms?: number; readonly problem?: string } {
  if (plan.driftCheckInterval === undefined) return {};
  const planned = durationMs(plan.driftCheckInterval, 0);
  if (annotation === undefined) return { ms: planned };
  // Durations here are at most a few characters (anything longer is not one); any value is read,
  // however long a time it says: it is clamped to the bounds below.
  const asked = annotation.length > 32 ? undefined : durationValue(annotation.trim());
  if (asked === undefined) {
    return {
      ms: planned,
      problem: `${driftCheckAnnotation}: ${JSON.stringify(annotation.slice(0, 32))} is not a duration such as '10 minutes'`,
    };
  }
  const min = durationMs(plan.driftCheckBounds?.min, 30_000);
  const max = durationMs(plan.driftCheckBounds?.max, 86_400_000);
  return { ms: Math.min(max, Math.max(min, asked)) };
}

/** The longest duration homeostat runs: 3650 days (a timer or timeout beyond it is a mistake). */
export const maxDurationMs = 3650 * 86_400_000;

/** What a duration may look like, said in every error about one. */
const durationGrammar = 'use a number of ms, s, m, h or d, such as 500ms, 30s, 10 minutes or 2h, up to 3650 days';

/**
 * The one grammar of homeostat's durations: milliseconds as a finite number from 0 to {@link maxDurationMs},
 * or a string of a decimal number and an optional unit (ms, s, m, h, d, or their words: `'500 milliseconds'`,
 * `'2 seconds'`, `'5m'`, `'1.5 hours'`; spaces only between number and unit), within the same range. Every
 * such string reads the same in Temporal's `ms` format, so a plan's durations mean the same to the
 * workflow's own backoff and timers and to Temporal's timeouts. `undefined` for anything else (`'1w'`,
 * `''`, `'-1s'`, `'1e309s'`, `NaN`, a number too large).
 */
export function parseDuration(d: unknown): number | undefined {
  const ms = durationValue(d);
  return ms !== undefined && ms <= maxDurationMs ? ms : undefined;
}

/** {@link parseDuration}'s grammar without its upper bound (a value that is clamped anyway). */
function durationValue(d: unknown): number | undefined {
  let ms: number;
  if (typeof d === 'number') ms = d;
  else if (typeof d === 'string' && d.length <= 32) {
    const m = /^(\d+(?:\.\d+)?) *(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hours?|d|days?)?$/i.exec(d);
    if (!m) return undefined;
    const unit = (m[2] ?? 'ms').toLowerCase();
    const factor =
      unit === 'ms' || unit.startsWith('milli')
        ? 1
        : unit.startsWith('s')
          ? 1000
          : unit.startsWith('m')
            ? 60_000
            : unit.startsWith('h')
              ? 3_600_000
              : 86_400_000;
    ms = Number(m[1]) * factor;
  } else return undefined;
  return Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

/** Why `d` is not a duration homeostat can run, for an error message: `"1w" is not a duration …`. */
function notADuration(d: unknown): string {
  const shown = typeof d === 'string' ? JSON.stringify(d.slice(0, 40)) : String(d);
  return `${shown} is not a duration homeostat can run (${durationGrammar})`;
}

/**
 * Parses a {@link Duration} to milliseconds ({@link parseDuration}'s grammar); `fallback` when
 * undefined. Throws a {@link PlanError} for anything else.
 */
export function durationMs(d: Duration | undefined, fallback: number): number {
  if (d === undefined) return fallback;
  const ms = parseDuration(d);
  if (ms === undefined) throw new PlanError(notADuration(d));
  return ms;
}

/**
 * Every problem of a plan's durations and retry numbers, one line each, naming the step and the field:
 * what Temporal or the workflow would otherwise refuse in the middle of a pass.
 */
function timingProblems(plan: ReconcilerPlan): string[] {
  const problems: string[] = [];
  const duration = (where: string, field: string, d: unknown): number | undefined => {
    if (d === undefined) return undefined;
    const ms = parseDuration(d);
    if (ms === undefined) problems.push(`${where}${field} ${notADuration(d)}`);
    else if (ms === 0) problems.push(`${where}${field} must be longer than 0`);
    return ms || undefined;
  };
  const count = (where: string, field: string, n: unknown, min: number, integer: boolean): void => {
    if (n === undefined) return;
    if (typeof n !== 'number' || !Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) {
      const shown = typeof n === 'number' ? String(n) : (JSON.stringify(n) ?? typeof n);
      problems.push(`${where}${field} ${shown} must be ${integer ? 'an integer' : 'a number'} of at least ${min}`);
    }
  };
  for (const step of [...plan.steps, ...(plan.cleanup ?? [])]) {
    const where = `step ${JSON.stringify(step.name)}: `;
    duration(where, 'startToCloseTimeout', step.startToCloseTimeout);
    duration(where, 'heartbeatTimeout', step.heartbeatTimeout);
    duration(where, 'approval.timeout', step.approval?.timeout);
    const initial = duration(where, 'retry.initialInterval', step.retry?.initialInterval);
    const maximum = duration(where, 'retry.maximumInterval', step.retry?.maximumInterval);
    if (initial !== undefined && maximum !== undefined && initial > maximum) {
      problems.push(`${where}retry.maximumInterval must not be shorter than retry.initialInterval`);
    }
    count(where, 'retry.backoffCoefficient', step.retry?.backoffCoefficient, 1, false);
    count(where, 'retry.attemptsPerRound', step.retry?.attemptsPerRound, 1, true);
  }
  duration('', 'driftCheckInterval', plan.driftCheckInterval);
  const min = duration('', 'driftCheckBounds.min', plan.driftCheckBounds?.min);
  const max = duration('', 'driftCheckBounds.max', plan.driftCheckBounds?.max);
  if (min !== undefined && max !== undefined && min > max)
    problems.push('driftCheckBounds.max must not be shorter than its min');
  count('', 'maxPassesPerRun', plan.maxPassesPerRun, 1, true);
  return problems;
}

/** The plan for an object's group and kind, if one is registered. */
export function findPlan(
  plans: PlanRegistry,
  ref: { readonly group: string; readonly kind: string },
): ReconcilerPlan | undefined {
  return Object.values(plans).find((plan) => plan.group === ref.group && plan.kind === ref.kind);
}

/** Plans by `<plural>.<group>`. */
export type PlanRegistry = Readonly<Record<string, ReconcilerPlan>>;

/** Builds a registry from plans. */
export function planRegistry(plans: readonly ReconcilerPlan[]): PlanRegistry {
  const out: Record<string, ReconcilerPlan> = {};
  for (const plan of plans) out[`${plan.plural}.${plan.group}`] = plan;
  return out;
}

/** The activity type that runs a step: `<plural>.<group>/<step>`. */
export function stepActivityType(plan: Pick<ReconcilerPlan, 'plural' | 'group'>, step: string): string {
  return `${plan.plural}.${plan.group}/${step}`;
}

/**
 * Steps grouped in layers: every step's dependencies are in earlier layers. Used to validate plans
 * and to draw the plan; the workflow itself starts each step as soon as its own dependencies are done.
 */
export function executionLayers(steps: readonly StepPlan[]): string[][] {
  const remaining = new Map(steps.map((s) => [s.name, new Set(s.dependsOn ?? [])]));
  const layers: string[][] = [];
  const done = new Set<string>();
  while (remaining.size > 0) {
    const layer = [...remaining].filter(([, deps]) => [...deps].every((d) => done.has(d))).map(([n]) => n);
    if (layer.length === 0) throw new PlanError(`steps ${[...remaining.keys()].join(', ')} form a dependency cycle`);
    for (const name of layer) {
      remaining.delete(name);
      done.add(name);
    }
    layers.push(layer);
  }
  return layers;
}

/** The default start-to-close timeout of a step. */
export const defaultStepTimeout: Duration = '1 minute';

/**
 * The plan's leading chain of local steps: the steps the workflow would run one after the other, each
 * alone, from the start of a pass, as long as each is local and their start-to-close timeouts add up
 * to at most `budgetMs`. At each point exactly one step may start (its dependencies all in the chain
 * before it, no other step startable beside it), so running the chain in sequence inside one activity
 * starts no step earlier or later relative to the others than the workflow would; a plan whose first
 * steps run in parallel has no chain. Observe runs this chain in its own local activity. A step with an
 * approval rule ends the chain, unless `runsGated` says its rule, asked this pass, needs no approval.
 */
export function leadingLocalSteps(
  steps: readonly StepPlan[],
  budgetMs: number,
  runsGated: (step: string) => boolean = () => false,
): StepPlan[] {
  const status: Record<string, 'pending' | 'succeeded'> = {};
  for (const s of steps) status[s.name] = 'pending';
  const chain: StepPlan[] = [];
  let spent = 0;
  for (;;) {
    const { start } = runnableSteps(steps, status);
    if (start.length !== 1) return chain;
    const step = steps.find((s) => s.name === start[0])!;
    if (step.execution !== 'local' || (step.approval !== undefined && !runsGated(step.name))) return chain;
    spent += durationMs(step.startToCloseTimeout ?? defaultStepTimeout, 0);
    if (spent > budgetMs) return chain;
    chain.push(step);
    status[step.name] = 'succeeded';
  }
}

/**
 * The steps that can start now: not yet started, and all dependencies succeeded. Steps whose
 * dependency failed or was skipped are returned in `skip`. Order follows the plan (deterministic).
 */
export function runnableSteps(
  steps: readonly StepPlan[],
  status: Readonly<Record<string, 'pending' | 'running' | 'succeeded' | 'failed' | 'skipped' | 'retrying'>>,
): { start: string[]; skip: string[] } {
  const start: string[] = [];
  const skip: string[] = [];
  for (const step of steps) {
    if ((status[step.name] ?? 'pending') !== 'pending') continue;
    const deps = step.dependsOn ?? [];
    if (deps.some((d) => status[d] === 'failed' || status[d] === 'skipped')) skip.push(step.name);
    else if (deps.every((d) => status[d] === 'succeeded')) start.push(step.name);
  }
  return { start, skip };
}
