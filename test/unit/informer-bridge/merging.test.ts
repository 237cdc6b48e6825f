import { CoalescingQueue, mergeRequests } from '../../../informer-bridge';
import type { ReconcileReason, ReconcileRequest } from '../../../core/definitions';
import { FakeClock, flush } from '../../support/fake-clock';

const ref = { group: 'homeostat.dev', version: 'v1alpha1', kind: 'App', namespace: 'pony-prod', name: 'pony-spawner' };
const req = (generation: number, reason: ReconcileReason = 'updated', uid = 'u1'): ReconcileRequest => ({
  ref,
  uid,
  generation,
  resourceVersion: String(100 + generation),
  reason,
});

describe('mergeRequests', () => {
  it('given two requests for the same object, the newest generation and resourceVersion win', () => {
    expect(mergeRequests(req(2), req(5))).toEqual(req(5));
    expect(mergeRequests(req(5), { ...req(4), resourceVersion: '999' })).toMatchObject({
      generation: 5,
      resourceVersion: '999',
    });
  });
  it('given added then updated, it stays added; given anything then deleted, it is deleted', () => {
    expect(mergeRequests(req(1, 'added'), req(3)).reason).toBe('added');
    expect(mergeRequests(req(3, 'added'), req(3, 'deleted')).reason).toBe('deleted');
    expect(mergeRequests(req(3, 'child-changed'), req(3, 'resync')).reason).toBe('child-changed');
    expect(mergeRequests(req(3, 'resync'), req(3, 'child-changed')).reason).toBe('child-changed');
  });
  it('given a new UID (the object was replaced), the newer request wins outright', () => {
    expect(mergeRequests(req(7, 'deleted', 'u1'), req(1, 'added', 'u2'))).toEqual(req(1, 'added', 'u2'));
  });
});

/** A deliver function the test completes by hand. */
function manualDeliver() {
  const calls: { key: string; item: ReconcileRequest; resolve: () => void; reject: (e: Error) => void }[] = [];
  const deliver = (key: string, item: ReconcileRequest) =>
    new Promise<void>((resolve, reject) => calls.push({ key, item, resolve, reject }));
  return { calls, deliver };
}

describe('CoalescingQueue', () => {
  it('given many events for one key while a delivery is in flight, it keeps one in flight and merges the rest into one', async () => {
    const clock = new FakeClock();
    const { calls, deliver } = manualDeliver();
    let merged = 0;
    const q = new CoalescingQueue<ReconcileRequest>({
      deliver,
      merge: mergeRequests,
      clock,
      minIntervalMs: 0,
      onMerged: () => merged++,
    });
    q.add('k', req(1, 'added'));
    for (let g = 2; g <= 100; g++) q.add('k', req(g));
    await flush();
    expect(calls).toHaveLength(1);
    expect(q.peek('k')).toEqual({ ...req(100), reason: 'updated' });
    expect(merged).toBe(98);
    calls[0]!.resolve();
    await flush();
    expect(calls).toHaveLength(2);
    expect(calls[1]!.item.generation).toBe(100);
    calls[1]!.resolve();
    await flush();
    expect(q.dirtyKeys).toBe(0);
  });

  it('given a minimum interval, a burst after a delivery waits for it and then goes as one', async () => {
    const clock = new FakeClock();
    const { calls, deliver } = manualDeliver();
    const q = new CoalescingQueue<ReconcileRequest>({ deliver, merge: mergeRequests, clock, minIntervalMs: 500 });
    q.add('k', req(1));
    await flush();
    calls[0]!.resolve();
    await flush();
    for (let g = 2; g <= 10; g++) q.add('k', req(g));
    await clock.advance(499);
    expect(calls).toHaveLength(1);
    await clock.advance(1);
    expect(calls).toHaveLength(2);
    expect(calls[1]!.item.generation).toBe(10);
  });

  it('given a concurrency bound, no more deliveries than that run at once', async () => {
    const clock = new FakeClock();
    const { calls, deliver } = manualDeliver();
    const q = new CoalescingQueue<ReconcileRequest>({
      deliver,
      merge: mergeRequests,
      clock,
      concurrency: 3,
      minIntervalMs: 0,
    });
    for (let i = 0; i < 10; i++) q.add(`k${i}`, req(1));
    await flush();
    expect(q.inFlight).toBe(3);
    expect(calls).toHaveLength(3);
    calls[0]!.resolve();
    await flush();
    expect(calls).toHaveLength(4);
    expect(q.inFlight).toBe(3);
  });

  it('given failing deliveries (Temporal down), it retries with backoff, merging newer events, and memory stays one entry per key', async () => {
    const clock = new FakeClock();
    const { calls, deliver } = manualDeliver();
    const retries: number[] = [];
    const q = new CoalescingQueue<ReconcileRequest>({
      deliver,
      merge: mergeRequests,
      clock,
      random: () => 0,
      minIntervalMs: 0,
      onFailed: (_k, _e, ms) => retries.push(ms),
    });
    q.add('a', req(1, 'added'));
    q.add('b', req(1, 'added'));
    await flush();
    for (let round = 0; round < 5; round++) {
      for (const c of calls.splice(0)) c.reject(new Error('unavailable'));
      await flush();
      for (let g = 2; g < 50; g++) q.add('a', req(round * 100 + g)); // events keep arriving
      expect(q.dirtyKeys).toBe(2);
      await clock.advance(retries.at(-1)!);
    }
    expect(retries.slice(0, 10)).toEqual([500, 500, 1000, 1000, 2000, 2000, 4000, 4000, 5000, 5000]);
    const last = calls.find((c) => c.key === 'a')!;
    expect(last.item).toMatchObject({ reason: 'added', generation: 449 });
    for (const c of calls.splice(0)) c.resolve();
    await flush();
    expect(q.dirtyKeys).toBe(0);
  });

  it('given pause(), nothing is delivered until resume(), and drain() flushes waiting retries', async () => {
    const clock = new FakeClock();
    const delivered: number[] = [];
    let fail = true;
    const q = new CoalescingQueue<ReconcileRequest>({
      deliver: async (_k, item) => {
        if (fail) throw new Error('down');
        delivered.push(item.generation);
      },
      merge: mergeRequests,
      clock,
      paused: true,
      minIntervalMs: 0,
    });
    q.add('a', req(3));
    await flush();
    expect(delivered).toEqual([]);
    q.resume();
    await flush();
    expect(q.dirtyKeys).toBe(1); // failed once, waiting for its retry
    fail = false;
    const drained = q.drain(1000);
    expect(await drained).toBe(true);
    expect(delivered).toEqual([3]);
  });
});
