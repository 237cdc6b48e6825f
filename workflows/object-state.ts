/**
 * Pure, deterministic helpers of the per-object workflow: request coalescing, the status a pass
 * outcome implies, status comparison, retry backoff and the markdown shown as current details in
 * the Temporal UI. No side effects, no clocks: safe in workflow code and easy to unit-test.
 */
import { durationMs, type StepPlan, type StepRetry } from '../core/plan';
import type {
  ConditionSpec,
  ObjectRef,
  ObjectStatus,
  Phase,
  ReconcileRequest,
  StatusFields,
  StepState,
} from '../core/definitions';
import { sameStatus } from '../core/status';

export { sameStatus };

/**
 * Coalesces reconcile requests: only the newest pending request is kept, and the wanted generation
 * only ever rises. A request for a new UID replaces one for an old UID (the new object wins).
 */
export class Coalescer {
  private pending: ReconcileRequest | undefined;
  private wanted: number | undefined;

  constructor(initial?: ReconcileRequest) {
    if (initial) this.offer(initial);
  }

  /** Records a request; returns the merged pending request. */
  offer(request: ReconcileRequest): ReconcileRequest {
    const prev = this.pending;
    const sameObject = prev !== undefined && prev.uid === request.uid;
    const generation = sameObject ? Math.max(prev.generation, request.generation) : request.generation;
    // A deletion stays a deletion until a pass has seen it.
    const reason = sameObject && prev.reason === 'deleted' ? 'deleted' : request.reason;
    this.pending = { ...request, generation, reason };
    this.wanted = Math.max(this.wanted ?? 0, request.generation);
    return this.pending;
  }

  /** The pending request, if any. */
  peek(): ReconcileRequest | undefined {
    return this.pending;
  }

  /** Takes the pending request (the next pass serves it). */
  take(): ReconcileRequest | undefined {
    const p = this.pending;
    this.pending = undefined;
    return p;
  }

  /** The highest generation ever requested. */
  get wantedGeneration(): number | undefined {
    return this.wanted;
  }

  /** Whether a pending request asks for more than a pass of `generation` of `uid` can deliver. */
  supersedes(uid: string, generation: number): boolean {
    const p = this.pending;
    if (!p) return false;
    return p.uid !== uid || p.generation > generation || p.reason === 'deleted';
  }
}

/** Whether two refs name the same object. */
export function sameRef(a: ObjectRef, b: ObjectRef): boolean {
  return (
    a.group === b.group &&
    a.kind === b.kind &&
    (a.namespace || '') === (b.namespace || '') &&
    a.name === b.name &&
    a.version === b.version
  );
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
  readonly steps?: readonly { readonly name: string; readonly message?: string }[];
  /** For `Reconciling`: the steps whose work is still under way, with their progress (`2/3 replicas ready`). */
  readonly progressing?: readonly { readonly step: string; readonly message: string }[];
  /** The reconciler's own status fields the pass's steps reported. */
  readonly fields?: StatusFields;
}

/** The condition type reporting one step: `connection-secret` → `ConnectionSecretReady`. */
export function stepConditionType(step: string): string {
  return `${step
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('')}Ready`;
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
          return progress
            ? c(stepConditionType(step.name), 'False', 'InProgress', progress.message)
            : c(stepConditionType(step.name), 'True', 'StepSucceeded', step.message || 'succeeded');
        }),
      ];
      break;
    }
    case 'Invalid':
      conditions = [
        c('Ready', 'False', 'InvalidSpec', i.message ?? 'invalid spec'),
        c('Progressing', 'False', 'InvalidSpec', 'Waiting for the spec to be fixed'),
        c('Degraded', 'False', 'InvalidSpec', 'No step ran'),
      ];
      break;
    case 'Degraded': {
      const reason = i.adoptionRefused ? 'AdoptionRefused' : i.terminal ? 'TerminalStepError' : 'StepFailed';
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

/** The workflow-level backoff before retry round `round + 1` (round is 1-based): exponential, capped. */
export function backoffMs(retry: StepRetry | undefined, round: number): number {
  const initial = durationMs(retry?.initialInterval, 1000);
  const coefficient = retry?.backoffCoefficient ?? 2;
  const max = durationMs(retry?.maximumInterval, 300_000);
  return Math.min(max, initial * Math.pow(coefficient, Math.max(0, round - 1)));
}

const icons: Record<StepState['status'], string> = {
  pending: '⏳ pending',
  running: '▶️ running',
  succeeded: '✅ succeeded',
  failed: '❌ failed',
  retrying: '🔁 retrying',
  skipped: '⏭️ skipped',
};

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\s+/g, ' ').slice(0, 200);
}

/** The workflow's current details: the object, its phase and a markdown table of step progress. */
export function detailsMarkdown(args: {
  readonly ref: ObjectRef;
  readonly phase: Phase;
  readonly pass: number;
  readonly generation?: number;
  readonly title: string;
  readonly plan: readonly StepPlan[];
  readonly steps: Readonly<Record<string, StepState>>;
  readonly nextTimer?: { readonly kind: string; readonly at: string };
  readonly lastError?: string;
}): string {
  const where = args.ref.namespace ? `${args.ref.namespace}/${args.ref.name}` : args.ref.name;
  const lines = [
    `**${args.ref.kind} ${where}** — phase **${args.phase}**, pass ${args.pass}` +
      (args.generation !== undefined ? `, generation ${args.generation}` : ''),
    '',
    `${args.title}:`,
    '',
    '| step | depends on | status | attempts | message |',
    '| --- | --- | --- | --- | --- |',
  ];
  for (const step of args.plan) {
    const s = args.steps[step.name] ?? { status: 'pending' as const, attempts: 0 };
    lines.push(
      `| ${step.name} | ${(step.dependsOn ?? []).join(', ') || '—'} | ${icons[s.status]} | ${s.attempts} | ${cell(s.message ?? '')} |`,
    );
  }
  if (args.lastError) lines.push('', `Last error: ${cell(args.lastError)}`);
  if (args.nextTimer) lines.push('', `Next ${args.nextTimer.kind} at ${args.nextTimer.at}`);
  return lines.join('\n');
}
