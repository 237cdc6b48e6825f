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
 * started, signal, timer started, search-attribute upsert, accepted update, marker, and one per
 * activity attempt. Queries are free.
 */
export function historyCost(events: readonly temporal.api.history.v1.IHistoryEvent[]): HistoryCost {
  const byType: Record<string, number> = {};
  let actions = 0;
  for (const e of events) {
    const type = (EventType[e.eventType ?? 0] ?? String(e.eventType)).replace(/^EVENT_TYPE_/, '');
    byType[type] = (byType[type] ?? 0) + 1;
    switch (e.eventType) {
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
      case EventType.EVENT_TYPE_TIMER_STARTED:
      case EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
      case EventType.EVENT_TYPE_MARKER_RECORDED:
        actions += 1;
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
