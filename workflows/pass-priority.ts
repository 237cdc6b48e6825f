/**
 * The priority of a pass's regular steps on the task queue (issue 27): a pass someone is waiting for
 * goes before a drift check. Temporal dispatches a backlog by priority key first (1 before 5; 3 when
 * unset) and by fairness key within one priority, so behind ten thousand queued drift checks an API
 * reconcile or a real change of the object still runs next. The object's fairness key and weight (its
 * workflow's priority) stay on every activity.
 */

/** What started a pass. */
export interface PassTrigger {
  /** A `reconcile-now` update (the API, a person or a backend waiting for the answer). */
  readonly byUpdate: boolean;
  /** The requeue or drift timer. */
  readonly timerKind?: 'requeue' | 'drift' | 'retry' | undefined;
  /** The reason of the coalesced reconcile request, when one started it. */
  readonly reason?: string | undefined;
}

/** The priority keys homeostat uses (Temporal's default range 1–5, 3 when unset). */
export const passPriorityKeys = {
  /** A pass someone waits for: `reconcile-now` (the API). */
  requested: 1,
  /** A pass for a change of the object, a child or a referenced object. */
  change: 2,
  /** A pass the reconciler asked for (`requeueAfter`, retries): Temporal's default. */
  normal: 3,
  /** Background checks: the drift timer and the bridge's resync. */
  background: 4,
} as const;

/** The priority key of a pass's regular steps. */
export function passPriorityKey(trigger: PassTrigger): number {
  if (trigger.byUpdate) return passPriorityKeys.requested;
  if (trigger.timerKind === 'drift') return passPriorityKeys.background;
  if (trigger.timerKind !== undefined) return passPriorityKeys.normal;
  if (trigger.reason === 'resync' || trigger.reason === 'drift') return passPriorityKeys.background;
  if (trigger.reason === undefined || trigger.reason === 'requeue') return passPriorityKeys.normal;
  return passPriorityKeys.change;
}
