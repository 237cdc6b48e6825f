/**
 * The part of `status` homeostat owns: the status a pass outcome implies, and comparing two (shared by
 * the workflow and the activities).
 */
import type { EventRecord } from './activity-contract';
import type { ConditionSpec, ObjectStatus, Phase, StatusFields } from './definitions';
import { adoptionRefusedType, invalidSpecType, stepFailedType, terminalStepType } from './errors';

/**
 * Whether status `a` (as read or last written) already shows `b` (as wanted): the same
 * observedGeneration, phase and conditions (compared by type, ignoring order and times), and every
 * reconciler field `b` reports with the same value in `a` (fields `b` does not report are left as
 * they are, so they do not count).
 */
export function sameStatus(a: ObjectStatus, b: ObjectStatus): boolean {
  if (a.observedGeneration !== b.observedGeneration || a.phase !== b.phase) return false;
  for (const [key, value] of Object.entries(b.fields ?? {})) if (a.fields?.[key] !== value) return false;
  const ca = [...(a.conditions ?? [])].sort((x, y) => x.type.localeCompare(y.type));
  const cb = [...(b.conditions ?? [])].sort((x, y) => x.type.localeCompare(y.type));
  if (ca.length !== cb.length) return false;
  return ca.every((c, i) => {
    const d = cb[i]!;
    return (
      c.type === d.type &&
      c.status === d.status &&
      c.reason === d.reason &&
      c.message === d.message &&
      c.observedGeneration === d.observedGeneration
    );
  });
}

/** What a pass found, in the terms status is made of. */
export interface StatusInputs {
  readonly phase: Phase;
  readonly generation: number;
  /** Why: the failing step's or validation's message. */
  readonly message?: string;
  /** The failing step, for `Degraded`. */
  readonly failedStep?: string;
  /** Whether the failure is terminal (no more retries until the spec changes). */
  readonly terminal?: boolean;
  /** Whether the step refused to adopt something it did not create (re-checked at the drift interval). */
  readonly adoptionRefused?: boolean;
  /** Number of steps that succeeded, for the `Ready` message. */
  readonly succeeded?: number;
  /** The steps of a `Ready` pass with their messages: one `<Step>Ready` condition each (what each child or external resource is). */
  readonly steps?: readonly { readonly name: string; readonly message?: string; readonly waitingFor?: string }[];
  /** For `Reconciling`: the steps whose work is still under way, with their progress (`2/3 replicas ready`). */
  readonly progressing?: readonly { readonly step: string; readonly message: string }[];
  /** The reconciler's own status fields the pass's steps reported. */
  readonly fields?: StatusFields;
}

/** The condition types homeostat reports on every object it reconciles (beside one per step). */
export const homeostatConditionTypes = ['Ready', 'Progressing', 'Degraded'] as const;

/** The condition type reporting one step: `connection-secret` → `ConnectionSecretReady`. */
export function stepConditionType(step: string): string {
  return `${step
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('')}Ready`;
}

/**
 * The steps of `stepNames` (the steps a workflow ran on an object, by an earlier plan too) that
 * `plan` no longer has: their `<Step>Ready` conditions are homeostat's, left from an operator version
 * before this one, and a status write removes them.
 */
export function retiredSteps(
  plan: {
    readonly steps: readonly { readonly name: string }[];
    readonly cleanup?: readonly { readonly name: string }[];
  },
  stepNames: readonly string[],
): string[] {
  const planned = new Set([...plan.steps, ...(plan.cleanup ?? [])].map((s) => s.name));
  return stepNames.filter((n) => !planned.has(n));
}

/**
 * The status (observedGeneration, phase and the `Ready`, `Progressing`, `Degraded` conditions) a pass
 * outcome implies. Deterministic: equal inputs give equal status, so unchanged status is not written.
 */
export function desiredStatus(
  i: StatusInputs,
): Required<Omit<ObjectStatus, 'fields'>> & { conditions: ConditionSpec[]; fields?: StatusFields } {
  const g = i.generation;
  const c = (type: string, status: ConditionSpec['status'], reason: string, message: string): ConditionSpec => ({
    type,
    status,
    reason,
    message,
    observedGeneration: g,
  });
  let conditions: ConditionSpec[];
  switch (i.phase) {
    case 'Ready':
      conditions = [
        c('Ready', 'True', 'Reconciled', `All ${i.succeeded ?? 0} steps succeeded`),
        c('Progressing', 'False', 'Reconciled', 'Reconcile finished'),
        c('Degraded', 'False', 'Reconciled', 'No step is failing'),
        ...(i.steps ?? []).map((step) =>
          c(stepConditionType(step.name), 'True', 'StepSucceeded', step.message || 'succeeded'),
        ),
      ];
      break;
    case 'Reconciling': {
      const under = i.progressing ?? [];
      const msg = under.map((p) => `${p.step}: ${p.message}`).join('; ') || 'Reconcile in progress';
      conditions = [
        c('Ready', 'False', 'Progressing', msg),
        c('Progressing', 'True', 'Progressing', msg),
        c('Degraded', 'False', 'Progressing', 'No step is failing'),
        ...(i.steps ?? []).map((step) => {
          const progress = under.find((p) => p.step === step.name);
          if (progress) return c(stepConditionType(step.name), 'False', 'InProgress', progress.message);
          if (step.waitingFor !== undefined) {
            return c(stepConditionType(step.name), 'False', 'WaitingForDependency', step.message || 'waiting');
          }
          return c(stepConditionType(step.name), 'True', 'StepSucceeded', step.message || 'succeeded');
        }),
      ];
      break;
    }
    case 'Invalid':
      conditions = [
        c('Ready', 'False', invalidSpecType, i.message ?? 'invalid spec'),
        c('Progressing', 'False', invalidSpecType, 'Waiting for the spec to be fixed'),
        c('Degraded', 'False', invalidSpecType, 'No step ran'),
      ];
      break;
    case 'Degraded': {
      const reason = i.adoptionRefused ? adoptionRefusedType : i.terminal ? terminalStepType : stepFailedType;
      const msg = `${i.failedStep ?? 'step'}: ${i.message ?? 'failed'}`;
      conditions = [
        c('Ready', 'False', reason, msg),
        i.adoptionRefused
          ? c('Progressing', 'False', reason, 'Nothing changed; checked again at the drift interval')
          : i.terminal
            ? c('Progressing', 'False', reason, 'Not retried until the spec changes')
            : c('Progressing', 'True', 'Retrying', `Retrying ${i.failedStep ?? 'step'} with backoff`),
        c('Degraded', 'True', reason, msg),
      ];
      break;
    }
    case 'Deleting':
      conditions = [
        c('Ready', 'False', 'Deleting', 'The object is being deleted'),
        c('Progressing', 'True', 'Cleanup', 'Running cleanup steps'),
        c('Degraded', 'False', 'Deleting', i.message ?? 'Cleanup in progress'),
      ];
      break;
    default:
      conditions = [
        c('Ready', 'False', i.phase, i.message ?? i.phase),
        c('Progressing', 'True', i.phase, 'Reconcile in progress'),
        c('Degraded', 'False', i.phase, 'No step is failing'),
      ];
  }
  const fields = i.fields && Object.keys(i.fields).length > 0 ? { fields: i.fields } : {};
  return { observedGeneration: g, phase: i.phase, conditions, ...fields };
}

/** A step of a pass that failed nothing, as the pass's status reports it. */
export interface SucceededStep {
  readonly name: string;
  readonly message?: string;
  /** Work still under way (a rollout): the pass is `Reconciling`. */
  readonly progressing?: string;
  /** The step is held back until this step (one it depends on) finishes its work: it did not run. */
  readonly waitingFor?: string;
}

/** The Event recorded with a status write that changes the phase. */
export interface PhaseEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly note: string;
}

/**
 * The status of a pass whose steps all succeeded (`steps` in plan order, with what each reported;
 * `fields`, the reconciler fields they reported, merged in plan order): `Ready`, or `Reconciling`
 * while a step reports progress, with a `<Step>Ready` condition per step unless `stepConditions` is
 * false (histories recorded before them); and the Event that goes with it when the phase changes. The
 * workflow writes it at the end of such a pass, and observe when it ran the whole plan itself, so
 * both write exactly the same.
 */
export function succeededPassStatus(
  generation: number,
  steps: readonly SucceededStep[],
  fields: StatusFields | undefined,
  stepConditions = true,
): { status: ReturnType<typeof desiredStatus>; event: PhaseEvent } {
  const progressing = steps.flatMap((s) =>
    s.progressing !== undefined ? [{ step: s.name, message: s.progressing }] : [],
  );
  const under = progressing.length > 0 ? progressing : undefined;
  return {
    status: desiredStatus({
      phase: under ? 'Reconciling' : 'Ready',
      generation,
      succeeded: steps.filter((s) => s.waitingFor === undefined).length,
      ...(stepConditions
        ? {
            steps: steps.map((s) => ({
              name: s.name,
              ...(s.message ? { message: s.message } : {}),
              ...(s.waitingFor !== undefined ? { waitingFor: s.waitingFor } : {}),
            })),
          }
        : {}),
      ...(under ? { progressing: under } : {}),
      ...(fields && Object.keys(fields).length > 0 ? { fields } : {}),
    }),
    event: under
      ? { type: 'Normal', reason: 'Progressing', note: under.map((p) => `${p.step}: ${p.message}`).join('; ') }
      : { type: 'Normal', reason: 'Reconciled', note: `generation ${generation} reconciled` },
  };
}

/**
 * The dedup key of the Event recorded with a status write that changes the phase: one per generation,
 * phase and pass, so a retried write records its Event once.
 */
export function phaseEventKey(generation: number, phase: Phase, pass: number): string {
  return `${generation}/${phase}/${pass}`;
}

/**
 * The Event to record with a status write: `event`, as a `Reconcile` action keyed by
 * {@link phaseEventKey}, when the write changes the phase from `knownPhase`; none otherwise. Shared by
 * the workflow's status writer and observe's own status write, so both record the same Event once.
 */
export function phaseChangeEvent(
  knownPhase: Phase | undefined,
  wanted: { readonly observedGeneration: number; readonly phase: Phase },
  event: PhaseEvent | undefined,
  pass: number,
): EventRecord | undefined {
  if (!event || knownPhase === wanted.phase) return undefined;
  return { ...event, action: 'Reconcile', dedupKey: phaseEventKey(wanted.observedGeneration, wanted.phase, pass) };
}

/**
 * The annotations that carry homeostat's status on kinds it does not define (a `Namespace`, whose
 * `status` belongs to Kubernetes; any reconciler with `crd: false`): the phase, the observed
 * generation (`0` for kinds without generations) and the conditions as a JSON list of
 * `metav1.Condition`s with their transition times. API surface, like the status fields.
 */
export const statusAnnotations = {
  phase: 'homeostat.dev/phase',
  observedGeneration: 'homeostat.dev/observed-generation',
  conditions: 'homeostat.dev/conditions',
} as const;

/** homeostat's own status fields, which a reconciler cannot declare or report as its own. */
export const reservedStatusFields: ReadonlySet<string> = new Set(['observedGeneration', 'phase', 'conditions']);

/** The name of a reconciler's own status field: lowerCamelCase, as Kubernetes' API conventions write fields. */
export const statusFieldName = /^[a-z][A-Za-z0-9]{0,62}$/;
