/**
 * Temporal Cloud's billing rule applied to fetched history, shared by the benchmark's cost scenario and
 * the integration tests that measure a pass's cost.
 */
import { temporal } from '@temporalio/proto';

const EventType = temporal.api.enums.v1.EventType;

/** Events and actions of a slice of history. */
export interface HistoryCost {
  readonly events: number;
  readonly actions: number;
  readonly byType: Record<string, number>;
}

/**
 * Counts events and billable actions of history events, following Temporal Cloud's pricing: workflow
 * started, signal, timer started, search-attribute upsert, accepted update, one per activity attempt,
 * and one for all the markers (local activities, patches) one workflow task records — Temporal Cloud
 * bills all local activities of one workflow task as a single action; counting a patch marker in the
 * same task as that action too errs on the side of more. Queries are free.
 */
export function historyCost(events: readonly temporal.api.history.v1.IHistoryEvent[]): HistoryCost {
  const byType: Record<string, number> = {};
  let actions = 0;
  /** Whether a marker of the current workflow task was already counted. */
  let markerCounted = false;
  for (const e of events) {
    const type = (EventType[e.eventType ?? 0] ?? String(e.eventType)).replace(/^EVENT_TYPE_/, '');
    byType[type] = (byType[type] ?? 0) + 1;
    switch (e.eventType) {
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
      case EventType.EVENT_TYPE_TIMER_STARTED:
      case EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
        actions += 1;
        break;
      case EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
        // The commands of one workflow task follow its completed event.
        markerCounted = false;
        break;
      case EventType.EVENT_TYPE_MARKER_RECORDED:
        if (!markerCounted) actions += 1;
        markerCounted = true;
        break;
      case EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
        // One action per attempt: the started event records the attempt that completed or failed.
        actions += e.activityTaskStartedEventAttributes?.attempt ?? 1;
        break;
      default:
        break;
    }
  }
  return { events: events.length, actions, byType };
}
