/**
 * Pure, deterministic helpers of the per-object workflow: request coalescing, the status a pass
 * outcome implies, status comparison, retry backoff and the markdown shown as current details in
 * the Temporal UI. No side effects, no clocks: safe in workflow code and easy to unit-test.
 */
import { durationMs, type StepPlan, type StepRetry } from '../core/plan';
import type { ObjectRef, Phase, ReconcileRequest, StepState } from '../core/definitions';
import {
  desiredStatus,
  sameStatus,
  stepConditionType,
  succeededPassStatus,
  type StatusInputs,
  type SucceededStep,
} from '../core/status';

export { desiredStatus, sameStatus, stepConditionType, succeededPassStatus, type StatusInputs, type SucceededStep };

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
