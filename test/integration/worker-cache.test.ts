/**
 * The worker's workflow cache is a setting (`HOMEOSTAT_WORKER_MAX_CACHED_WORKFLOWS`, issue 27's sizing):
 * a worker told to keep 2 object workflows keeps no more, however many objects it reconciles; each
 * pass of the others replays its history instead. Read from the worker's own status, not a clock.
 */
import pino from 'pino';
import queued from '../fixtures/operators/queued';
import { eventually } from '../support/eventually';
import { randomSuffix, useStack } from '../support/harness';
import { installOperatorCrds, startInProcessHomeostat } from '../support/homeostat';

const group = 'queued.homeostat.dev';

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
    for (const name of names) {
      await t.custom.createNamespacedCustomObject({
        group,
        version: 'v1alpha1',
        namespace: t.namespace,
        plural: 'queuees',
        body: { apiVersion: `${group}/v1alpha1`, kind: 'Queuee', metadata: { name }, spec: {} },
      });
    }
    const phaseOf = async (name: string): Promise<string | undefined> =>
      (
        (await t.custom.getNamespacedCustomObject({
          group,
          version: 'v1alpha1',
          namespace: t.namespace,
          plural: 'queuees',
          name,
        })) as { status?: { phase?: string } }
      ).status?.phase;
    await eventually(
      'every object Ready',
      () => Promise.all(names.map(phaseOf)),
      (ps) => ps.every((p) => p === 'Ready'),
      180_000,
    );
    const cached = homeostat.worker.getStatus().numCachedWorkflows;
    expect(cached).toBeGreaterThan(0);
    expect(cached).toBeLessThanOrEqual(2);
  });
});
