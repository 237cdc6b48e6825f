/**
 * Approval gates: a step that may run only once a person with the right to approve it says yes
 * (`defineReconciler`'s `approval` on a step). Plain types and deterministic helpers shared by the
 * workflow (which waits, durably and without polling), the `checkApproval` activity (which evaluates
 * the rule against the step's preview) and the API (`POST …/approve`, `POST …/reject`).
 *
 * An approval is for one generation and one preview: the workflow waits for a decision naming the
 * generation and the preview's hash it shows; a spec change while it waits voids the wait (the pass
 * gives way, the next one checks again), and a decision for another generation or preview is refused.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ChildDiff, PlannedChange } from './dry-run';
import type { ConditionSpec, ObjectRef, Phase } from './definitions';
import type { Duration } from './plan';
import { desiredStatus } from './status';

/** How long a step waits for a decision when its rule names no timeout: 7 days. */
export const defaultApprovalTimeout: Duration = '7 days';

/** The activity type that checks whether a step needs approval now. */
export const approvalCheckActivityType = 'checkApproval';

/** The condition type that reports a pending, granted or refused approval. */
export const approvedConditionType = 'Approved';

/** The longest comment an approver may give (characters). */
export const maxApprovalCommentLength = 1024;

/** The longest preview text the status and history carry (characters; the rest is cut). */
export const maxApprovalPreviewLength = 2048;

/** What a step's approval rule sees: the spec and what the step's preview found. */
export interface ApprovalFacts<Spec> {
  readonly spec: Spec;
  /** The step's preview in a dry run (empty lists when it has none, or it previewed nothing). */
  readonly observed: { readonly changes: readonly PlannedChange[]; readonly children: readonly ChildDiff[] };
  /** Whether the step is a cleanup step of an object being deleted. */
  readonly deleting: boolean;
  /**
   * Reads an object as the step's `read` does (confined the same way, `reads` declared): a setting
   * the rule depends on, such as whether a referenced server requires approval.
   */
  readonly read: <T extends KubernetesObject>(
    object: Pick<KubernetesObject, 'apiVersion' | 'kind'> & { metadata: { name: string; namespace?: string } },
  ) => Promise<T | undefined>;
}

/**
 * A step's approval rule: `'always'`, or a predicate over the spec and the step's preview returning
 * why approval is needed (a short reason) or `undefined` when it is not.
 */
export type ApprovalRule<Spec> =
  'always' | ((facts: ApprovalFacts<Spec>) => string | undefined | Promise<string | undefined>);

/** The input of the `checkApproval` activity. */
export interface ApprovalCheckInput {
  readonly ref: ObjectRef;
  readonly step: string;
  /** The generation and UID the pass observed: a mismatch supersedes the pass (`SpecChanged`). */
  readonly generation: number;
  readonly uid: string;
  /** The pass (its number keys the Event of the `AwaitingApproval` status write). */
  readonly pass: number;
  /** The object's phase as the workflow knows it: an Event is recorded only when it changes. */
  readonly knownPhase?: Phase;
  /** The preview hash of an approval this workflow holds for the step and generation: no new wait for it. */
  readonly grantedHash?: string;
}

/** The answer of the `checkApproval` activity. */
export interface ApprovalCheck {
  /** Why approval is needed now; absent: the step runs without one. */
  readonly reason?: string;
  /** What the step would change, as text (its preview's changes and children), at most {@link maxApprovalPreviewLength}. */
  readonly preview: string;
  /** A hash of the preview and the generation: a decision must name it. */
  readonly previewHash: string;
  /** The `AwaitingApproval` status the activity wrote (absent: approval not needed, or already granted). */
  readonly awaitingStatus?: ReturnType<typeof awaitingApprovalStatus>;
}

/** What the workflow waits for, as its `state` query shows it (and the API checks a decision against). */
export interface AwaitingApproval {
  readonly step: string;
  readonly generation: number;
  readonly previewHash: string;
  readonly reason: string;
  readonly preview: string;
  /** When the wait ends with nothing done (ISO, workflow time). */
  readonly deadline: string;
}

/** The argument of the `decide-approval` update: a decision on the step the workflow waits for. */
export interface ApprovalDecision {
  readonly ref: ObjectRef;
  readonly decision: 'approve' | 'reject';
  /** The approver's user name, from the API's TokenReview. */
  readonly approver: string;
  readonly comment?: string;
  /** The generation and preview hash the decision is for: anything else is refused (stale). */
  readonly generation: number;
  readonly previewHash: string;
}

/** The failure types the `decide-approval` update's validator refuses with (the API answers 409). */
export const approvalRefusalTypes = {
  notAwaiting: 'NotAwaitingApproval',
  stale: 'StaleApproval',
} as const;

/** The text of a decision: `approved by alice: looks fine`. */
export function decisionText(d: Pick<ApprovalDecision, 'decision' | 'approver' | 'comment'>): string {
  const verb = d.decision === 'approve' ? 'approved' : 'rejected';
  return `${verb} by ${d.approver}${d.comment ? `: ${d.comment}` : ''}`;
}

/** The `Approved` condition of an object whose step `step` waits, was decided, or timed out. */
export function approvedCondition(
  generation: number,
  step: string,
  state:
    | { readonly awaiting: Pick<AwaitingApproval, 'reason' | 'preview'> }
    | { readonly decided: Pick<ApprovalDecision, 'decision' | 'approver' | 'comment'> }
    | { readonly timedOut: string },
): ConditionSpec {
  const base = { type: approvedConditionType, observedGeneration: generation };
  if ('awaiting' in state) {
    const { reason, preview } = state.awaiting;
    return {
      ...base,
      status: 'False',
      reason: 'AwaitingApproval',
      message: `step ${step} waits for approval: ${reason}${preview ? `; would change: ${preview}` : ''}`,
    };
  }
  if ('decided' in state) {
    const approved = state.decided.decision === 'approve';
    return {
      ...base,
      status: approved ? 'True' : 'False',
      reason: approved ? 'Approved' : 'Rejected',
      message: `step ${step} ${decisionText(state.decided)}`,
    };
  }
  return { ...base, status: 'False', reason: 'ApprovalTimedOut', message: `step ${step}: ${state.timedOut}` };
}

/** A dry run's step as the text an approver reads: `drop database app; Deployment web: update spec.replicas`. */
export function previewText(observed: ApprovalFacts<unknown>['observed']): string {
  const parts = [
    ...observed.changes.map((c) => `${c.action} ${c.target}${c.detail ? ` (${c.detail})` : ''}`),
    ...observed.children
      .filter((c) => c.action !== 'unchanged')
      .map(
        (c) =>
          `${c.kind} ${c.name}: ${c.action}${c.fields.length > 0 ? ` ${c.fields.map((f) => f.path).join(', ')}` : ''}`,
      ),
  ];
  const text = parts.join('; ');
  return text.length > maxApprovalPreviewLength ? `${text.slice(0, maxApprovalPreviewLength - 1)}…` : text;
}

/**
 * The status of an object whose step `step` waits for approval: phase `AwaitingApproval`, `Ready` and
 * `Progressing` false, and the `Approved=False` condition naming the step, the reason and the preview.
 */
export function awaitingApprovalStatus(
  generation: number,
  step: string,
  awaiting: Pick<AwaitingApproval, 'reason' | 'preview'>,
): ReturnType<typeof desiredStatus> {
  const approved = approvedCondition(generation, step, { awaiting });
  const base = desiredStatus({ phase: 'AwaitingApproval', generation, message: approved.message });
  const conditions = base.conditions.map((c) =>
    c.type === 'Progressing' ? { ...c, status: 'False' as const, message: `step ${step} waits for approval` } : c,
  );
  return { ...base, conditions: [...conditions, approved] };
}
