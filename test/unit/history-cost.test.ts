/**
 * The billing rule the benchmarks and cost tests apply to fetched histories (pure logic): which events
 * are actions, and all markers of one workflow task (its local activities) counted as one.
 */
import { temporal } from '@temporalio/proto';
import { historyCost } from '../../bench/history-cost';

const T = temporal.api.enums.v1.EventType;
const ev = (eventType: temporal.api.enums.v1.EventType, extra: Record<string, unknown> = {}) => ({
  eventType,
  ...extra,
});

describe('historyCost', () => {
  it('given a start, a signal, a timer, an upsert and an accepted update, each is one action; queries and tasks are free', () => {
    const cost = historyCost([
      ev(T.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED),
      ev(T.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED),
      ev(T.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED),
      ev(T.EVENT_TYPE_WORKFLOW_TASK_STARTED),
      ev(T.EVENT_TYPE_WORKFLOW_TASK_COMPLETED),
      ev(T.EVENT_TYPE_TIMER_STARTED),
      ev(T.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES),
      ev(T.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED),
    ]);
    expect(cost).toMatchObject({ events: 8, actions: 5 });
    expect(cost.byType).toMatchObject({ TIMER_STARTED: 1, WORKFLOW_TASK_COMPLETED: 1 });
  });

  it('given activity attempts, each attempt is an action (the started event carries the attempt)', () => {
    const cost = historyCost([
      ev(T.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED),
      ev(T.EVENT_TYPE_ACTIVITY_TASK_STARTED, { activityTaskStartedEventAttributes: { attempt: 3 } }),
      ev(T.EVENT_TYPE_ACTIVITY_TASK_COMPLETED),
      ev(T.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED),
      ev(T.EVENT_TYPE_ACTIVITY_TASK_STARTED),
    ]);
    expect(cost.actions).toBe(4);
  });

  it('given the markers of local activities, those of one workflow task are one action, those of the next another', () => {
    const task = [
      ev(T.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED),
      ev(T.EVENT_TYPE_WORKFLOW_TASK_STARTED),
      ev(T.EVENT_TYPE_WORKFLOW_TASK_COMPLETED),
    ];
    const markers = (n: number) => Array.from({ length: n }, () => ev(T.EVENT_TYPE_MARKER_RECORDED));
    expect(historyCost([...task, ...markers(5)]).actions).toBe(1);
    expect(historyCost([...task, ...markers(5), ...task, ...markers(2)]).actions).toBe(2);
    expect(historyCost([...task, ...task]).actions).toBe(0);
  });
});
