/**
 * Where one object's change → Ready went, stage by stage, read from its workflow's history (server
 * timestamps; the benchmark's clock is the same machine's): from the change to the signal that asked
 * for its pass (the API server's write, its watch, the bridge's queue and the signal call), from the
 * signal to the worker starting the workflow task that took it (the workflow task queue), and from there
 * to Ready seen through a watch (the pass: its activities, the status write, the watch). Inside the
 * pass, the time its tasks spent queued is told apart: activity tasks (scheduled → started) and later
 * workflow tasks (scheduled → started). Used by the noisy-neighbour scenario to say where team B's
 * change waits during team A's flood.
 */
import type { LoadedDataConverter } from '@temporalio/common';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import type { temporal } from '@temporalio/proto';
import { reconcileRequestedSignal, type ReconcileRequest } from '../core/definitions';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** One change of the object: its generation, when it was made and when Ready was seen (epoch ms). */
export interface TimedChange {
  readonly generation: number;
  readonly changedAt: number;
  readonly readyAt: number;
}

/** The stages of one change, in ms; absent when the history holds no signal for its generation. */
export interface ChangeStages {
  /** Change → the signal for its generation in history. */
  readonly toSignalMs: number;
  /** Signal → the next workflow task started. */
  readonly workflowQueueMs: number;
  /** That workflow task's start → Ready seen. */
  readonly passMs: number;
  /** Within the pass: activity tasks' scheduled → started, summed. */
  readonly activityQueuedMs: number;
  /** Within the pass: later workflow tasks' scheduled → started, summed. */
  readonly laterWorkflowTasksQueuedMs: number;
  /** Within the pass: workflow tasks' started → completed, summed (the worker's time, local activities included). */
  readonly workflowTasksRunningMs: number;
  /** Within the pass: activity tasks' started → completed (or failed), summed. */
  readonly activitiesRunningMs: number;
  /** The pass's last workflow task completed → Ready seen (the status write reaching the watch). */
  readonly afterLastTaskMs: number;
}

/** The stages, in the order they happen. */
export const stageNames = [
  'toSignalMs',
  'workflowQueueMs',
  'passMs',
  'activityQueuedMs',
  'laterWorkflowTasksQueuedMs',
  'workflowTasksRunningMs',
  'activitiesRunningMs',
  'afterLastTaskMs',
] as const satisfies readonly (keyof ChangeStages)[];

/** An event ID as the API gives it (a Long, or a number). */
type EventId = { toString(): string } | number | null | undefined;
const idOf = (id: EventId): string => (id === null || id === undefined ? '' : id.toString());

const ms = (event: HistoryEvent): number => {
  const t = event.eventTime;
  return t ? Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : Number.NaN;
};

/** The stages of each change found in `events` (the object's runs, in order), in the order of `changes`. */
export async function changeStages(
  converter: LoadedDataConverter,
  events: readonly HistoryEvent[],
  changes: readonly TimedChange[],
): Promise<ChangeStages[]> {
  const signals = new Map<number, number>(); // generation → index of its first signal event
  for (let i = 0; i < events.length; i++) {
    const s = events[i]!.workflowExecutionSignaledEventAttributes;
    if (s?.signalName !== reconcileRequestedSignal.name) continue;
    const request = await decodeFromPayloadsAtIndex<ReconcileRequest>(converter, 0, s.input?.payloads);
    if (request && !signals.has(request.generation)) signals.set(request.generation, i);
  }
  // The times of tasks' scheduled and started events by event ID, per run, and each event's run.
  const scheduledAt = new Map<string, number>();
  const runOf: number[] = [];
  let run = 0;
  for (const e of events) {
    if (e.workflowExecutionStartedEventAttributes) run++;
    runOf.push(run);
    if (
      e.activityTaskScheduledEventAttributes ||
      e.workflowTaskScheduledEventAttributes ||
      e.activityTaskStartedEventAttributes ||
      e.workflowTaskStartedEventAttributes
    ) {
      scheduledAt.set(`${run}/${idOf(e.eventId)}`, ms(e));
    }
  }
  /** The time from the event `id` (of the same run as event `i`) to `t`. */
  const queuedBefore = (i: number, id: EventId, t: number): number =>
    t - (scheduledAt.get(`${runOf[i]}/${idOf(id)}`) ?? t);
  const out: ChangeStages[] = [];
  for (const change of changes) {
    const at = signals.get(change.generation);
    if (at === undefined) continue;
    const signalMs = ms(events[at]!);
    let taskStartMs: number | undefined;
    let activityQueuedMs = 0;
    let laterWorkflowTasksQueuedMs = 0;
    let workflowTasksRunningMs = 0;
    let activitiesRunningMs = 0;
    let lastTaskDoneMs: number | undefined;
    for (let i = at + 1; i < events.length; i++) {
      const e = events[i]!;
      const t = ms(e);
      if (taskStartMs !== undefined && t > change.readyAt) break;
      const started = e.workflowTaskStartedEventAttributes;
      if (started) {
        const queued = queuedBefore(i, started.scheduledEventId, t);
        if (taskStartMs === undefined) taskStartMs = t;
        else laterWorkflowTasksQueuedMs += queued;
      }
      if (taskStartMs === undefined) continue;
      const activity = e.activityTaskStartedEventAttributes;
      if (activity) activityQueuedMs += queuedBefore(i, activity.scheduledEventId, t);
      const done = e.workflowTaskCompletedEventAttributes;
      if (done) {
        workflowTasksRunningMs += queuedBefore(i, done.startedEventId, t);
        lastTaskDoneMs = t;
      }
      const ended = e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes;
      if (ended) activitiesRunningMs += queuedBefore(i, ended.startedEventId, t);
    }
    if (taskStartMs === undefined) continue;
    out.push({
      toSignalMs: signalMs - change.changedAt,
      workflowQueueMs: taskStartMs - signalMs,
      passMs: change.readyAt - taskStartMs,
      activityQueuedMs,
      laterWorkflowTasksQueuedMs,
      workflowTasksRunningMs,
      activitiesRunningMs,
      afterLastTaskMs: change.readyAt - (lastTaskDoneMs ?? taskStartMs),
    });
  }
  return out;
}
