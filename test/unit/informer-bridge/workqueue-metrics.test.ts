import { Registry } from 'prom-client';
import type { ReconcileRequest } from '../../../core/definitions';
import { CoalescingQueue } from '../../../informer-bridge/queue';
import { WorkqueueMetrics, workqueueDurationBuckets } from '../../../informer-bridge/workqueue-metrics';
import { FakeClock } from '../../support/fake-clock';

function request(kind: string, name: string): ReconcileRequest {
  return {
    ref: { group: 'homeostat.dev', version: 'v1alpha1', kind, namespace: 'ns', name },
    uid: `uid-${name}`,
    generation: 1,
    resourceVersion: '1',
    reason: 'added',
  };
}

/** The value of one sample of the registry's exposition, or undefined. */
async function value(registry: Registry, name: string, labels: string): Promise<number | undefined> {
  const line = (await registry.metrics()).split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

/** A queue wired to the metrics as the bridge wires it, whose deliveries wait until released (or fail). */
function setup() {
  const clock = new FakeClock();
  const registry = new Registry();
  const metrics = new WorkqueueMetrics(registry, clock, ['app', 'postgresdatabase']);
  const held: { resolve: () => void; reject: (err: Error) => void }[] = [];
  const queue = new CoalescingQueue<ReconcileRequest>({
    deliver: () => new Promise<void>((resolve, reject) => held.push({ resolve, reject })),
    merge: (_older, newer) => newer,
    concurrency: 1,
    minIntervalMs: 0,
    retryBackoff: { initialMs: 1000, maxMs: 1000, jitter: 0 },
    clock,
    onAdded: (key, req) => metrics.added(key, req),
    onTaken: (key) => metrics.taken(key),
    onDelivered: (key) => metrics.done(key),
    onFailed: (key) => metrics.done(key, true),
  });
  return { clock, registry, queue, held };
}

describe('the bridge queue’s controller-runtime workqueue metrics', () => {
  it('given no request yet, it serves every controller’s series at zero, with client-go’s buckets', async () => {
    const { registry } = setup();
    expect(await value(registry, 'workqueue_depth', 'name="app",controller="app",priority=""')).toBe(0);
    expect(await value(registry, 'workqueue_adds_total', 'name="postgresdatabase",controller="postgresdatabase"')).toBe(
      0,
    );
    expect(await value(registry, 'workqueue_retries_total', 'name="app",controller="app"')).toBe(0);
    expect(await value(registry, 'workqueue_longest_running_processor_seconds', 'name="app",controller="app"')).toBe(0);
    expect(workqueueDurationBuckets).toEqual([1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000]);
  });

  it('given requests waiting behind a held delivery, it counts depth and adds per kind, and the time spent queued and working', async () => {
    const { clock, registry, queue, held } = setup();
    queue.add('a1', request('App', 'a1'));
    queue.add('a2', request('App', 'a2'));
    queue.add('a2', request('App', 'a2')); // merged: not an add
    queue.add('p1', request('PostgresDatabase', 'p1'));
    // a1 is in flight; a2 and p1 wait for the one slot.
    expect(await value(registry, 'workqueue_depth', 'name="app",controller="app",priority=""')).toBe(1);
    expect(
      await value(registry, 'workqueue_depth', 'name="postgresdatabase",controller="postgresdatabase",priority=""'),
    ).toBe(1);
    expect(await value(registry, 'workqueue_adds_total', 'name="app",controller="app"')).toBe(2);
    await clock.advance(3000);
    expect(await value(registry, 'workqueue_unfinished_work_seconds', 'name="app",controller="app"')).toBe(3);
    expect(await value(registry, 'workqueue_longest_running_processor_seconds', 'name="app",controller="app"')).toBe(3);
    held.shift()!.resolve();
    await clock.advance(0);
    // a2 was taken after 3 s in the queue; a1 worked 3 s.
    expect(await value(registry, 'workqueue_depth', 'name="app",controller="app",priority=""')).toBe(0);
    expect(await value(registry, 'workqueue_queue_duration_seconds_bucket', 'le="1",name="app",controller="app"')).toBe(
      1,
    );
    expect(
      await value(registry, 'workqueue_queue_duration_seconds_bucket', 'le="10",name="app",controller="app"'),
    ).toBe(2);
    expect(await value(registry, 'workqueue_work_duration_seconds_sum', 'name="app",controller="app"')).toBe(3);
  });

  it('given a failed delivery, it counts a retry and the request waits in the queue again', async () => {
    const { clock, registry, queue, held } = setup();
    queue.add('a1', request('App', 'a1'));
    held.shift()!.reject(new Error('unavailable'));
    await clock.advance(0);
    expect(await value(registry, 'workqueue_retries_total', 'name="app",controller="app"')).toBe(1);
    expect(await value(registry, 'workqueue_adds_total', 'name="app",controller="app"')).toBe(2);
    expect(await value(registry, 'workqueue_depth', 'name="app",controller="app",priority=""')).toBe(1);
    await clock.advance(1000);
    expect(await value(registry, 'workqueue_depth', 'name="app",controller="app",priority=""')).toBe(0);
    held.shift()!.resolve();
    await clock.advance(0);
    expect(await value(registry, 'workqueue_work_duration_seconds_count', 'name="app",controller="app"')).toBe(2);
  });
});
