/**
 * The noisy-neighbour scenario's stage split ({@link changeStages}): from a scripted history, each
 * change's time to its signal, in the workflow task queue, in the pass, and queued inside the pass.
 */
import { defaultFailureConverter, defaultPayloadConverter, type LoadedDataConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { changeStages } from '../../bench/pass-stages';
import { reconcileRequestedSignal } from '../../core/definitions';

const converter: LoadedDataConverter = {
  payloadConverter: defaultPayloadConverter,
  failureConverter: defaultFailureConverter,
  payloadCodecs: [],
};
const at = (ms: number) => ({ seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1e6 });
let id = 0;
/** An event as the API gives it, with plain numbers where the API has Longs (both convert to strings alike). */
const event = (ms: number, attrs: Record<string, unknown>): temporal.api.history.v1.IHistoryEvent =>
  ({ eventId: ++id, eventTime: at(ms), ...attrs }) as unknown as temporal.api.history.v1.IHistoryEvent;
const signal = (ms: number, generation: number) =>
  event(ms, {
    workflowExecutionSignaledEventAttributes: {
      signalName: reconcileRequestedSignal.name,
      input: { payloads: [defaultPayloadConverter.toPayload({ generation, uid: 'u' })] },
    },
  });

describe('change stages from a workflow history', () => {
  it('given a signal, a queued workflow task, a queued activity and a later task, each stage is its share of change → Ready', async () => {
    id = 0;
    const events = [
      event(0, { workflowExecutionStartedEventAttributes: {} }),
      signal(10_300, 2), // the change was made at 10,000
      event(10_300, { workflowTaskScheduledEventAttributes: {} }), // 3
      event(12_300, { workflowTaskStartedEventAttributes: { scheduledEventId: 3 } }), // 4: 2 s in the queue
      event(12_350, { workflowTaskCompletedEventAttributes: { startedEventId: 4 } }), // 50 ms running
      event(12_400, { activityTaskScheduledEventAttributes: {} }), // 6
      event(15_400, { activityTaskStartedEventAttributes: { scheduledEventId: 6 } }), // 7: 3 s queued
      event(15_450, { activityTaskCompletedEventAttributes: { scheduledEventId: 6, startedEventId: 7 } }), // 50 ms
      event(15_500, { workflowTaskScheduledEventAttributes: {} }), // 9
      event(16_500, { workflowTaskStartedEventAttributes: { scheduledEventId: 9 } }), // 10: 1 s queued
      event(16_600, { workflowTaskCompletedEventAttributes: { startedEventId: 10 } }), // 100 ms running
      signal(20_000, 3), // a change with no workflow task after it before its Ready: not counted
    ];
    const stages = await changeStages(converter, events, [
      { generation: 2, changedAt: 10_000, readyAt: 17_000 },
      { generation: 3, changedAt: 19_900, readyAt: 20_100 },
      { generation: 9, changedAt: 30_000, readyAt: 31_000 }, // never signalled
    ]);
    expect(stages).toEqual([
      {
        toSignalMs: 300,
        workflowQueueMs: 2_000,
        passMs: 4_700,
        activityQueuedMs: 3_000,
        laterWorkflowTasksQueuedMs: 1_000,
        workflowTasksRunningMs: 150,
        activitiesRunningMs: 50,
        afterLastTaskMs: 400,
      },
    ]);
  });
});
