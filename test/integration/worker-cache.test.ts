/**
 * The worker's workflow cache is a setting (`HOMEOSTAT_WORKER_MAX_CACHED_WORKFLOWS`, issue 27's sizing):
 * a worker told to keep 2 object workflows keeps no more, however many objects it reconciles; each
 * pass of the others replays its history instead. Read from the worker's own status, not a clock.
 */
import pino from 'pino';
import queued from '../fixtures/operators/queued';
import { randomSuffix, useStack } from '../support/harness';
import { installOperatorCrds, startInProcessHomeostat } from '../support/homeostat';
import { createQueuees, waitQueueesReady } from '../support/queuees';

describe('the worker’s workflow cache', () => {
  const t = useStack();

  it('given a cache of 2, six objects reconciled to Ready leave at most 2 workflows cached', async () => {
    await installOperatorCrds(t, queued);
    const homeostat = await startInProcessHomeostat(t, {
      taskQueue: `cache-${randomSuffix()}`,
      logger: pino({ level: 'warn' }),
      operator: queued,
      bridge: {},
      maxCachedWorkflows: 2,
    });
    const names = Array.from({ length: 6 }, (_, i) => `c-${i}`);
    await createQueuees(t, names);
    await waitQueueesReady(t, names);
    const cached = homeostat.worker.getStatus().numCachedWorkflows;
    expect(cached).toBeGreaterThan(0);
    expect(cached).toBeLessThanOrEqual(2);
  });
});
