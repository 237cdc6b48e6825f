/**
 * Priority (issue 27): a pass someone waits for overtakes queued drift checks. Behind a worker that
 * runs one step at a time and is held, every object's drift check queues its step on the task queue
 * (priority 4); a `reconcile-now` update — what the API sends — queues its pass's step at priority 1.
 * When the worker is free again, that step runs next, not after the backlog. The order is read from
 * the steps themselves, never from a clock.
 */
import { temporal } from '@temporalio/proto';
import pino from 'pino';
import { reconcileNowUpdate, workflowIdFor } from '../../core/definitions';
import { driftCheckAnnotation } from '../../core/plan';
import queued, { closeGate, openGate, started } from '../fixtures/operators/queued';
import { randomSuffix, useStack } from '../support/harness';
import { eventually } from '../support/eventually';
import { installOperatorCrds, startInProcessHomeostat } from '../support/homeostat';
import { createQueuees, waitQueueesReady } from '../support/queuees';

const group = 'queued.homeostat.dev';
const drifting = 8;

describe('priority of a pass’s steps', () => {
  const t = useStack();

  afterAll(() => openGate());

  it('given a backlog of drift checks behind a held worker, an object’s reconcile-now runs its step next', async () => {
    await installOperatorCrds(t, queued);
    await startInProcessHomeostat(t, {
      taskQueue: `priority-${randomSuffix()}`,
      logger: pino({ level: 'warn' }),
      operator: queued,
      bridge: {},
      maxConcurrentActivityTaskExecutions: 1,
    });
    const names = [...Array.from({ length: drifting }, (_, i) => `q-${i}`), 'vip'];
    const refOf = (name: string) => ({ group, version: 'v1alpha1', kind: 'Queuee', namespace: t.namespace, name });
    const handleOf = (name: string) => t.temporal.workflow.getHandle(workflowIdFor(refOf(name)));
    // vip has no drift check of its own in the test's time: only the reconcile-now runs its pass.
    await createQueuees(t, names, (name) => (name === 'vip' ? { [driftCheckAnnotation]: '24 hours' } : undefined));
    await waitQueueesReady(t, names);

    // Hold the worker: the next step to start blocks its one slot, and the drift checks queue behind it.
    closeGate();
    const queuedSteps = async (name: string): Promise<number> =>
      ((await handleOf(name).describe()).raw.pendingActivities ?? []).filter(
        (a) => a.state === temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED,
      ).length;
    const backlog = async (): Promise<number> =>
      (await Promise.all(names.filter((n) => n !== 'vip').map(queuedSteps))).reduce((a, b) => a + b, 0);
    await eventually('drift checks queued behind the held step', backlog, (n) => n >= drifting - 1, 180_000);

    // What the API sends: an update that waits for a pass.
    const uid = (
      (await t.custom.getNamespacedCustomObject({
        group,
        version: 'v1alpha1',
        namespace: t.namespace,
        plural: 'queuees',
        name: 'vip',
      })) as { metadata: { uid: string } }
    ).metadata.uid;
    const answered = handleOf('vip').executeUpdate(reconcileNowUpdate, { args: [{ ref: refOf('vip'), uid }] });
    answered.catch(() => {});
    await eventually(
      'the reconcile-now step queued',
      () => queuedSteps('vip'),
      (n) => n === 1,
      120_000,
    );
    const queuedAhead = await backlog();

    const before = started.length;
    openGate();
    await answered;
    const next = started.slice(before, before + 2);
    process.stdout.write(
      `[figures] priority: ${queuedAhead} drift-check steps queued ahead of the reconcile-now; the steps started after the worker was free: ${started.slice(before, before + 5).join(', ')} (all: ${started.join(' ')}; before ${before})\n`,
    );
    // The blocked step finishes; the first step taken from the backlog is vip's.
    expect(next[0]).toBe('vip');
  });
});
